// GraphSAGE forward/backward by hand in Eigen, Adam updates, and the model file format.
// GCC 12 reports false maybe-uninitialized warnings inside its own AVX-512 intrinsics when it
// inlines Eigen's packet code; they are not about this file's variables.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "agent/advantage_model.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>

#include "absl/strings/str_cat.h"
#include "ir/opcode.h"

namespace hlox {
namespace {

constexpr int kShapeColumns = 2 + kFeatureMaxRank + 2;  // element type, rank, dims, elements, bytes

float SignedLog(float v) { return std::copysign(std::log1p(std::fabs(v)), v); }

Eigen::MatrixXf Concat(const Eigen::MatrixXf& a, const Eigen::MatrixXf& b) {
  Eigen::MatrixXf c(a.rows(), a.cols() + b.cols());
  c << a, b;
  return c;
}

void InitMatrix(Eigen::MatrixXf& m, int rows, int cols, std::mt19937_64& rng) {
  std::normal_distribution<float> n(0, std::sqrt(2.0f / rows));
  m.resize(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) m(i, j) = n(rng);
}

}  // namespace

int GraphInputWidth() { return kOpcodeCount + kShapeColumns + 2; }

GraphInput MakeGraphInput(const GraphFeatures& f, const DecisionVector& decisions) {
  GraphInput g;
  int64_t n = f.node_count();
  size_t cols = f.node_columns.size();
  g.x = Eigen::MatrixXf::Zero(n, GraphInputWidth());
  for (int64_t i = 0; i < n; ++i) {
    const float* row = f.node_features.data() + i * cols;
    int op = static_cast<int>(row[0]);
    if (op >= 0 && op < kOpcodeCount) g.x(i, op) = 1;
    for (int c = 1; c < static_cast<int>(std::min<size_t>(cols, 1 + kShapeColumns)); ++c) {
      g.x(i, kOpcodeCount + c - 1) = SignedLog(row[c]);
    }
  }
  g.site_nodes = f.site_nodes;
  for (int64_t node : g.site_nodes) {
    if (node >= 0) g.x(node, kOpcodeCount + kShapeColumns) = 1;
  }
  g.decision_column = kOpcodeCount + kShapeColumns + 1;
  std::vector<Eigen::Triplet<float>> t;
  std::vector<float> degree(n, 0);
  for (int64_t e = 0; e < f.edge_count(); ++e) {
    int64_t s = f.edge_index[e], d = f.edge_index[f.edge_count() + e];
    t.emplace_back(s, d, 1.0f);
    t.emplace_back(d, s, 1.0f);
    degree[s] += 1;
    degree[d] += 1;
  }
  for (auto& tr : t) tr = Eigen::Triplet<float>(tr.row(), tr.col(), 1.0f / degree[tr.row()]);
  g.agg.resize(n, n);
  g.agg.setFromTriplets(t.begin(), t.end());
  SetDecisions(g, decisions);
  return g;
}

void SetDecisions(GraphInput& g, const DecisionVector& decisions) {
  g.flip_sign = Eigen::VectorXf::Ones(g.x.rows());
  for (size_t s = 0; s < g.site_nodes.size() && s < decisions.size(); ++s) {
    if (g.site_nodes[s] < 0) continue;
    g.x(g.site_nodes[s], g.decision_column) = static_cast<float>(decisions[s]);
    g.flip_sign(g.site_nodes[s]) = decisions[s] == 0 ? 1.0f : -1.0f;
  }
}

AdvantageModel::AdvantageModel(uint64_t seed, bool antisymmetric) : antisymmetric_(antisymmetric) {
  std::mt19937_64 rng(seed + 17);
  int in = GraphInputWidth();
  InitMatrix(p_.w1, 2 * in, kHidden, rng);
  InitMatrix(p_.w2, 2 * kHidden, kHidden, rng);
  p_.b1 = Eigen::VectorXf::Zero(kHidden);
  p_.b2 = Eigen::VectorXf::Zero(kHidden);
  Eigen::MatrixXf w3;
  InitMatrix(w3, kHidden, 1, rng);
  p_.w3 = w3.col(0);
  m_ = p_;
  v_ = p_;
  for (Params* q : {&m_, &v_}) {
    q->w1.setZero(); q->w2.setZero(); q->b1.setZero(); q->b2.setZero(); q->w3.setZero(); q->b3 = 0;
  }
}

Eigen::VectorXf AdvantageModel::Predict(const GraphInput& g) const {
  Eigen::MatrixXf h0 = g.x;
  Eigen::MatrixXf z1 = (Concat(h0, g.agg * h0) * p_.w1).rowwise() + p_.b1.transpose();
  Eigen::MatrixXf h1 = z1.cwiseMax(0.0f);
  Eigen::MatrixXf z2 = (Concat(h1, g.agg * h1) * p_.w2).rowwise() + p_.b2.transpose();
  Eigen::MatrixXf h2 = z2.cwiseMax(0.0f);
  Eigen::VectorXf y = (h2 * p_.w3).array() + p_.b3;
  if (antisymmetric_ && g.flip_sign.size() == y.size()) y = y.cwiseProduct(g.flip_sign);
  return y;
}

double AdvantageModel::TrainStep(const GraphInput& g, const std::vector<int64_t>& nodes,
                                 const std::vector<float>& labels, double lr) {
  Eigen::MatrixXf h0 = g.x;
  Eigen::MatrixXf a0 = Concat(h0, g.agg * h0);
  Eigen::MatrixXf z1 = (a0 * p_.w1).rowwise() + p_.b1.transpose();
  Eigen::MatrixXf h1 = z1.cwiseMax(0.0f);
  Eigen::MatrixXf a1 = Concat(h1, g.agg * h1);
  Eigen::MatrixXf z2 = (a1 * p_.w2).rowwise() + p_.b2.transpose();
  Eigen::MatrixXf h2 = z2.cwiseMax(0.0f);
  Eigen::VectorXf y = (h2 * p_.w3).array() + p_.b3;
  const bool flip = antisymmetric_ && g.flip_sign.size() == y.size();
  if (flip) y = y.cwiseProduct(g.flip_sign);
  Eigen::VectorXf dy = Eigen::VectorXf::Zero(y.size());
  double loss = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    float err = y(nodes[i]) - labels[i];
    loss += err * err;
    dy(nodes[i]) += 2 * err / nodes.size();
  }
  loss /= std::max<size_t>(1, nodes.size());
  if (flip) dy = dy.cwiseProduct(g.flip_sign);  // back through y = sign * g
  Params grad;
  grad.w3 = h2.transpose() * dy;
  grad.b3 = dy.sum();
  Eigen::MatrixXf dz2 = (dy * p_.w3.transpose()).cwiseProduct((z2.array() > 0).cast<float>().matrix());
  grad.w2 = a1.transpose() * dz2;
  grad.b2 = dz2.colwise().sum().transpose();
  Eigen::MatrixXf da1 = dz2 * p_.w2.transpose();
  int h = kHidden;
  Eigen::MatrixXf dh1 = da1.leftCols(h) + Eigen::MatrixXf(g.agg.transpose() * da1.rightCols(h));
  Eigen::MatrixXf dz1 = dh1.cwiseProduct((z1.array() > 0).cast<float>().matrix());
  grad.w1 = a0.transpose() * dz1;
  grad.b1 = dz1.colwise().sum().transpose();
  // Adam.
  ++step_;
  const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
  float c1 = 1 - std::pow(b1, step_), c2 = 1 - std::pow(b2, step_);
  auto update = [&](auto& param, auto& m, auto& v, const auto& gr) {
    m = b1 * m + (1 - b1) * gr;
    v = b2 * v + (1 - b2) * gr.cwiseProduct(gr);
    param -= (lr * (m / c1).array() / ((v / c2).array().sqrt() + eps)).matrix();
  };
  update(p_.w1, m_.w1, v_.w1, grad.w1);
  update(p_.w2, m_.w2, v_.w2, grad.w2);
  update(p_.b1, m_.b1, v_.b1, grad.b1);
  update(p_.b2, m_.b2, v_.b2, grad.b2);
  update(p_.w3, m_.w3, v_.w3, grad.w3);
  m_.b3 = b1 * m_.b3 + (1 - b1) * grad.b3;
  v_.b3 = b2 * v_.b3 + (1 - b2) * grad.b3 * grad.b3;
  p_.b3 -= static_cast<float>(lr * (m_.b3 / c1) / (std::sqrt(v_.b3 / c2) + eps));
  return loss;
}

namespace {
void WriteMatrix(std::ofstream& out, const Eigen::MatrixXf& m) {
  out << m.rows() << " " << m.cols() << "\n";
  for (int i = 0; i < m.rows(); ++i) {
    for (int j = 0; j < m.cols(); ++j) out << m(i, j) << (j + 1 == m.cols() ? "\n" : " ");
  }
}
bool ReadMatrix(std::ifstream& in, Eigen::MatrixXf& m, int64_t rows, int64_t cols) {
  int64_t r = 0, c = 0;
  if (!(in >> r >> c) || r != rows || c != cols) return false;
  m.resize(r, c);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j)
      if (!(in >> m(i, j))) return false;
  return true;
}
constexpr char kMagicV1[] = "hlox-advantage-graphsage-v1";  // plain output
constexpr char kMagic[] = "hlox-advantage-graphsage-v2";    // + antisymmetric flag
}  // namespace

absl::Status AdvantageModel::Save(const std::string& path) const {
  std::ofstream out(path);
  if (!out) return absl::InvalidArgumentError(absl::StrCat("cannot write ", path));
  out.precision(9);
  out << kMagic << " " << GraphInputWidth() << " " << kHidden << " " << (antisymmetric_ ? 1 : 0) << "\n";
  WriteMatrix(out, p_.w1);
  WriteMatrix(out, p_.w2);
  WriteMatrix(out, p_.b1);
  WriteMatrix(out, p_.b2);
  WriteMatrix(out, p_.w3);
  out << p_.b3 << "\n";
  return out ? absl::OkStatus() : absl::InternalError(absl::StrCat("write failed: ", path));
}

absl::StatusOr<AdvantageModel> AdvantageModel::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read model ", path));
  std::string magic;
  int width = 0, hidden = 0;
  int antisymmetric = 0;
  in >> magic >> width >> hidden;
  if (magic == kMagic) in >> antisymmetric;
  if ((magic != kMagic && magic != kMagicV1) || width != GraphInputWidth() || hidden != kHidden ||
      (antisymmetric != 0 && antisymmetric != 1)) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not a model for this hlox version"));
  }
  AdvantageModel m(0, antisymmetric == 1);
  Eigen::MatrixXf b1, b2, w3;
  bool ok = ReadMatrix(in, m.p_.w1, 2 * width, hidden) && ReadMatrix(in, m.p_.w2, 2 * hidden, hidden) &&
            ReadMatrix(in, b1, hidden, 1) && ReadMatrix(in, b2, hidden, 1) && ReadMatrix(in, w3, hidden, 1) &&
            static_cast<bool>(in >> m.p_.b3);
  if (!ok) return absl::InvalidArgumentError(absl::StrCat(path, ": truncated or malformed model"));
  m.p_.b1 = b1.col(0);
  m.p_.b2 = b2.col(0);
  m.p_.w3 = w3.col(0);
  return m;
}

std::vector<float> ScaleAdvantages(const std::vector<double>& a) {
  std::vector<double> mags;
  for (double v : a) mags.push_back(std::fabs(v));
  std::vector<float> out;
  if (mags.empty()) return out;
  std::nth_element(mags.begin(), mags.begin() + mags.size() / 2, mags.end());
  double sigma = std::max(mags[mags.size() / 2], 1e-12);
  for (double v : a) out.push_back(static_cast<float>(std::copysign(std::log1p(std::fabs(v) / sigma), v)));
  return out;
}

}  // namespace hlox
