// The HTML pages of report_html.h: a shared page frame with inline CSS, key/value and data tables,
// every piece of text HTML-escaped.
#include "agent/report_html.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent/report_charts.h"
#include "agent/report_svg.h"

namespace hlox {
namespace {

const char* const kStyle = R"(body{font-family:sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
.verdict{font-size:1.15em;padding:.6em 1em;border-left:5px solid #2ca02c;background:#f3faf3}
.verdict.none{border-color:#999;background:#f6f6f6}.note{color:#555;font-size:.9em}
svg.chart{width:100%;height:auto;border:1px solid #eee}tr.chosen td{font-weight:bold})";

std::string PageStart(const std::string& title) {
  return absl::StrCat("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>",
                      HtmlEscape(title), "</title>\n<style>\n", kStyle, "\n</style>\n</head>\n<body>\n<h1>",
                      HtmlEscape(title), "</h1>\n");
}

std::string Fixed(double v, int digits = 3) {
  return std::isfinite(v) ? absl::StrFormat("%.*f", digits, v) : std::string("-");
}
std::string Sig(double v) { return std::isfinite(v) ? absl::StrFormat("%.6g", v) : std::string("-"); }

// A JSON value as table text (strings unquoted, null as "-").
std::string Text(const nlohmann::json& j) {
  if (j.is_null()) return "-";
  if (j.is_string()) return j.get<std::string>();
  if (j.is_number_float()) return Sig(j.get<double>());
  return j.dump();
}

std::string KeyValueTable(const std::vector<std::pair<std::string, std::string>>& rows) {
  std::string t = "<table class=\"setup\">\n";
  for (const auto& [k, v] : rows) absl::StrAppend(&t, "<tr><th>", HtmlEscape(k), "</th><td>", HtmlEscape(v), "</td></tr>\n");
  return t + "</table>\n";
}

// A row of cells; cells starting with a digit, '-' or '.' are right-aligned numbers.
std::string Row(const std::vector<std::string>& cells, const char* tag = "td", const std::string& cls = "") {
  std::string r = cls.empty() ? "<tr>" : absl::StrCat("<tr class=\"", cls, "\">");
  for (const std::string& c : cells) {
    const bool num = std::string(tag) == "td" && !c.empty() && (isdigit(static_cast<unsigned char>(c[0])) || c[0] == '.');
    absl::StrAppend(&r, "<", tag, num ? " class=\"num\">" : ">", HtmlEscape(c), "</", tag, ">");
  }
  return r + "</tr>\n";
}

std::string Interval(const nlohmann::json& ci) {
  if (!ci.is_array() || ci.size() != 2 || !ci[0].is_number() || !ci[1].is_number()) return "-";
  return absl::StrCat(Fixed(ci[0].get<double>()), " .. ", Fixed(ci[1].get<double>()));
}

std::string Host(const nlohmann::json& s) {
  const nlohmann::json h = s.value("host", nlohmann::json::object());
  return absl::StrCat(h.value("cpu", std::string("?")), ", ISA level ", h.value("isa", std::string("?")));
}

// The verdict in one sentence, with the rule it was judged under.
std::string VerdictSection(const nlohmann::json& s) {
  const nlohmann::json rule = s.value("verdict_rule", nlohmann::json());
  std::string outcome = s.value("verdict_outcome", std::string("search"));
  if (rule.is_object() && outcome == "single") outcome = rule.value("outcome", outcome);
  const double speedup = SummaryNumber(s, "best_speedup");
  std::string what;
  if (outcome == "gain") what = "faster than the default: the interval's lower bound is above 1 + delta";
  else if (outcome == "unconfirmed") what = "not confirmed: the interval reaches below 1 + delta";
  else if (outcome == "slower") what = "slower than the default: the default's decisions are written";
  else if (outcome == "default") what = "no verified gain: the default policy is kept";
  else what = "no paired verdict was measured: this is the search's own, unverified estimate";
  const bool measured = s.value("verdict", std::string()) == "paired";
  std::string out = "<section id=\"verdict\">\n<h2>Verdict</h2>\n";
  absl::StrAppend(&out, "<p class=\"verdict", measured && outcome != "default" ? "" : " none", "\">",
                  measured ? "Verified speedup " : "Speedup ", "<b>", HtmlEscape(Fixed(speedup)), "x</b>");
  if (measured) absl::StrAppend(&out, " (95% CI ", HtmlEscape(Interval(s["best_speedup_ci"])), ")");
  absl::StrAppend(&out, ": ", HtmlEscape(what), ".</p>\n");
  std::vector<std::pair<std::string, std::string>> rows = {
      {"outcome", outcome},
      {"search estimate (unverified)", absl::StrCat(Fixed(SummaryNumber(s, "search_speedup")), "x")}};
  if (rule.is_object()) {
    rows.push_back({"minimum effect (delta)", absl::StrCat(Fixed(100 * rule.value("delta", NAN), 1), "%")});
    rows.push_back({"module size class", Text(rule.value("size_class", nlohmann::json()))});
    rows.push_back({"paired rounds", Text(rule.value("rounds", nlohmann::json()))});
    rows.push_back({"calibration", Text(rule.value("calibration", nlohmann::json()))});
    if (rule.contains("calibration_cpu")) {
      rows.push_back({"calibrated on", absl::StrCat(Text(rule["calibration_cpu"]), ", ",
                                                    Text(rule.value("calibration_date", nlohmann::json())))});
    }
  }
  return out + KeyValueTable(rows) + "</section>\n";
}

std::string RaceSection(const nlohmann::json& race) {
  if (!race.is_array() || race.empty()) return "";
  std::string t = "<section id=\"race\">\n<h2>Verdict race</h2>\n<p class=\"note\">The search's top candidates "
                  "raced against the default on this machine (paired); the chosen one was measured afresh.</p>\n<table>\n";
  t += Row({"#", "search estimate", "race speedup", "95% CI", "rounds", "levels", "status"}, "th");
  for (size_t i = 0; i < race.size(); ++i) {
    const nlohmann::json& c = race[i];
    const bool chosen = c.value("chosen", false), failed = c.value("failed", false);
    t += Row({absl::StrCat(i + 1), absl::StrCat(Fixed(SummaryNumber(c, "search_speedup")), "x"),
              failed ? "-" : absl::StrCat(Fixed(SummaryNumber(c, "race_speedup")), "x"),
              failed ? "-" : Interval(c.value("race_ci", nlohmann::json())), Text(c.value("rounds", nlohmann::json())),
              Text(c.value("levels", nlohmann::json())), failed ? "measurement failed" : chosen ? "chosen" : ""},
             "td", chosen ? "chosen" : "");
  }
  return t + "</table>\n</section>\n";
}

}  // namespace

std::string SearchReportHtml(const nlohmann::json& s, const ChartSpec& chart) {
  std::string page = PageStart(absl::StrCat("Search report: ", s.value("module", std::string("?"))));
  page += VerdictSection(s);
  page += "<section id=\"setup\">\n<h2>Setup</h2>\n";
  page += KeyValueTable({
      {"module", Text(s.value("module", nlohmann::json()))},
      {"pipeline", Text(s.value("pipeline", nlohmann::json()))},
      {"decision point", absl::StrCat(Text(s.value("decision_point", nlohmann::json())), " (",
                                      Text(s.value("sites", nlohmann::json())), " sites)")},
      {"algorithm", Text(s.value("algo", nlohmann::json()))},
      {"budget", Text(s.value("budget", nlohmann::json()))},
      {"seed", Text(s.value("seed", nlohmann::json()))},
      {"evaluations", absl::StrCat(Text(s.value("evaluations", nlohmann::json())), " (invalid ",
                                   Text(s.value("invalid", nlohmann::json())), ", best at ",
                                   Text(s.value("evaluations_to_best", nlohmann::json())), ")")},
      {"default measured", absl::StrCat(Text(s.value("default_evaluations", nlohmann::json())), " times")},
      {"noise-aware search", Text(s.value("noise_aware", nlohmann::json()))},
      {"default cost", Sig(SummaryNumber(s, "default_cost"))},
      {"best cost (search)", Sig(SummaryNumber(s, "best_cost"))},
      {"host", Host(s)},
  });
  page += "</section>\n<section id=\"progress\">\n<h2>Progress</h2>\n";
  page += ChartSvg(chart);
  page += "<p class=\"note\">Dots: every evaluation's measured speedup (default cost over its cost; noisy single "
          "measurements). Dashed line: the search's best-so-far, its own unverified estimate. Red dashed line: the "
          "default policy. Green square with bar: the verified speedup from a fresh paired measurement, with its "
          "95% interval.</p>\n</section>\n";
  page += RaceSection(s.value("race", nlohmann::json()));
  const nlohmann::json seq = s.value("pass_sequence", nlohmann::json());
  if (seq.is_array() && !seq.empty()) {
    std::vector<std::string> passes;
    for (const nlohmann::json& p : seq) passes.push_back(Text(p));
    absl::StrAppend(&page, "<section id=\"passes\">\n<h2>Best pass sequence</h2>\n<p>",
                    HtmlEscape(absl::StrJoin(passes, " ")), "</p>\n</section>\n");
  }
  return page + "</body>\n</html>\n";
}

std::string CampaignReportHtml(const std::vector<std::pair<std::string, std::string>>& setup,
                               const std::vector<CampaignAlgoRow>& rows, const std::vector<CampaignRun>& runs,
                               const std::vector<std::pair<std::string, ChartSpec>>& charts) {
  std::string page = PageStart("Campaign report");
  page += "<section id=\"setup\">\n<h2>Setup</h2>\n" + KeyValueTable(setup) + "</section>\n";
  page += "<section id=\"summary\">\n<h2>Verified speedups</h2>\n<table>\n";
  page += Row({"graph", "algorithm", "verified speedup (median seed)", "its 95% CI", "seeds with a gain", "delta",
               "range over seeds", "evaluations to best (median)", "invalid"},
              "th");
  for (const CampaignAlgoRow& r : rows) {
    page += Row({r.graph, r.algo, absl::StrCat(Fixed(r.speedup), "x"), absl::StrCat(Fixed(r.low), " .. ", Fixed(r.high)),
                 absl::StrCat(r.gains, " of ", r.seeds),
                 std::isfinite(r.delta) ? absl::StrCat(Fixed(100 * r.delta, 1), "%") : "-",
                 absl::StrCat(Fixed(r.min_speedup), " .. ", Fixed(r.max_speedup)), Fixed(r.median_to_best, 0),
                 absl::StrCat(r.invalid)});
  }
  page += "</table>\n<p class=\"note\">A gain verdict needs the interval's lower bound above 1 + delta, the minimum "
          "effect calibrated for the module's size.</p>\n</section>\n";
  for (const auto& [graph, chart] : charts) {
    absl::StrAppend(&page, "<section class=\"graph\">\n<h2>", HtmlEscape(graph), "</h2>\n", ChartSvg(chart));
    page += "<table>\n";
    page += Row({"algorithm", "seed", "evaluations", "invalid", "search estimate", "verified speedup", "95% CI",
                 "outcome"},
                "th");
    for (const CampaignRun& r : runs) {
      if (r.graph != graph) continue;
      if (!r.summary.is_object()) {
        page += Row({r.algo, absl::StrCat(r.seed), "-", "-", "-", "-", "-", "failed (see error.txt)"});
        continue;
      }
      const nlohmann::json& s = r.summary;
      page += Row({r.algo, absl::StrCat(r.seed), Text(s.value("evaluations", nlohmann::json())),
                   Text(s.value("invalid", nlohmann::json())), absl::StrCat(Fixed(SummaryNumber(s, "search_speedup")), "x"),
                   absl::StrCat(Fixed(SummaryNumber(s, "best_speedup")), "x"),
                   Interval(s.value("best_speedup_ci", nlohmann::json())),
                   Text(s.value("verdict_outcome", nlohmann::json()))});
    }
    page += "</table>\n</section>\n";
  }
  return page + "</body>\n</html>\n";
}

}  // namespace hlox
