// hlox keygen --out DIR --name NAME: a CURVE key pair for a broker, worker or agent, as Z85 text
// (NAME.key holds the secret key, mode 0600; NAME.pub the public key to put on an allow-list).
#include <sys/stat.h>
#include <zmq.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "tools/commands.h"

namespace hlox::cli {

void RegisterKeygen(CLI::App& app) {
  auto* cmd = app.add_subcommand("keygen", "make a CURVE key pair (NAME.key secret, NAME.pub public)");
  auto out = std::make_shared<std::string>(".");
  auto name = std::make_shared<std::string>("hlox");
  auto force = std::make_shared<bool>(false);
  cmd->add_option("--out", *out, "folder to write into")->capture_default_str();
  cmd->add_option("--name", *name, "key pair name")->capture_default_str();
  cmd->add_flag("--force", *force, "overwrite an existing key pair");
  cmd->callback([out, name, force] {
    namespace fs = std::filesystem;
    char pub[41], sec[41];
    if (zmq_curve_keypair(pub, sec) != 0) {
      std::cerr << "hlox keygen: this libzmq has no CURVE support: " << zmq_strerror(zmq_errno()) << "\n";
      ExitCode() = 1;
      return;
    }
    std::error_code ec;
    fs::create_directories(*out, ec);
    fs::path key = fs::path(*out) / (*name + ".key"), pubf = fs::path(*out) / (*name + ".pub");
    if (!*force && (fs::exists(key) || fs::exists(pubf))) {
      std::cerr << "hlox keygen: " << key.string() << " exists; use --force to replace it\n";
      ExitCode() = 1;
      return;
    }
    {
      std::ofstream k(key);
      k << sec << "\n";
      std::ofstream p(pubf);
      p << pub << "\n";
      if (!k || !p) {
        std::cerr << "hlox keygen: cannot write into " << *out << "\n";
        ExitCode() = 1;
        return;
      }
    }
    chmod(key.c_str(), 0600);
    std::cout << "public " << pub << "\nwrote " << key.string() << " (secret) and " << pubf.string() << "\n";
  });
}

}  // namespace hlox::cli
