// Bayesian linear regression with per-group Gaussian priors, a Huber reweighting and Thompson
// sampling, sized for search budgets (a few hundred observations; features of any number: past
// the observations the posterior is computed in observation space).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 + Eigen AVX-512 (see runtime/gemm/gemm.cc)

#include "agent/guided_surrogate.h"

#include <algorithm>
#include <cmath>

namespace hlox {
namespace {

// Prior (mean, standard deviation) of each feature group, in units of log(cost ratio).
constexpr double kInterceptStd = 0.5;
constexpr double kChangedStd = 0.5;       // all sites changed: within about x1.6 either way
constexpr double kModelMean = 0.3;        // trust the advantage model a little a priori
constexpr double kModelStd = 0.3;
constexpr double kSiteStd = 0.1;          // one site: about 10% either way
constexpr double kNoiseStd = 0.15;        // before there are residuals to estimate it from
constexpr double kHuber = 1.5;

}  // namespace

GuidedSurrogate::GuidedSurrogate(const std::vector<int>& choices, const DecisionVector& defaults,
                                 const std::vector<float>& site_gain)
    : choices_(choices), defaults_(defaults), site_gain_(site_gain) {
  width_ = 3;
  for (int c : choices) {
    offset_.push_back(width_);
    width_ += std::max(0, c - 1);
  }
  prior_mean_ = Eigen::VectorXd::Zero(width_);
  prior_precision_ = Eigen::VectorXd::Constant(width_, 1 / (kSiteStd * kSiteStd));
  prior_precision_(0) = 1 / (kInterceptStd * kInterceptStd);
  prior_precision_(1) = 1 / (kChangedStd * kChangedStd);
  prior_precision_(2) = 1 / (kModelStd * kModelStd);
  prior_mean_(2) = kModelMean;
  Fit();
}

Eigen::VectorXd GuidedSurrogate::Features(const DecisionVector& v) const {
  Eigen::VectorXd x = Eigen::VectorXd::Zero(width_);
  x(0) = 1;
  const size_t n = std::min(v.size(), defaults_.size());
  if (n == 0) return x;
  for (size_t s = 0; s < n; ++s) {
    if (v[s] == defaults_[s]) continue;
    x(1) += 1;
    if (s < site_gain_.size()) x(2) += site_gain_[s];
    int64_t idx = v[s] < defaults_[s] ? v[s] : v[s] - 1;
    int64_t col = offset_[s] + idx;
    bool in_range = idx >= 0 && (s + 1 < offset_.size() ? col < offset_[s + 1] : col < width_);
    if (in_range) x(col) = 1;
  }
  x(1) /= static_cast<double>(n);
  x(2) /= static_cast<double>(n);
  return x;
}

void GuidedSurrogate::Add(const DecisionVector& v, double log_ratio) {
  if (!std::isfinite(log_ratio)) return;
  xs_.push_back(Features(v));
  ys_.push_back(std::clamp(log_ratio, -3.0, 3.0));
}

void GuidedSurrogate::Fit() {
  const size_t n = ys_.size();
  // With more features than observations (a pass-order space: a hundred slots of fifty
  // choices, thousands of indicators) the posterior is computed in observation space: the
  // weight-space form factors a width x width matrix, O(width^3), which took minutes per fit.
  dual_ = width_ > static_cast<int64_t>(n);
  std::vector<double> weight(n, 1.0);
  double noise = kNoiseStd;
  Eigen::LLT<Eigen::MatrixXd> llt;
  if (dual_) {
    xmat_.resize(static_cast<Eigen::Index>(n), width_);
    for (size_t i = 0; i < n; ++i) xmat_.row(static_cast<Eigen::Index>(i)) = xs_[i].transpose();
  }
  const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(ys_.data(), static_cast<Eigen::Index>(n));
  const Eigen::VectorXd prior_cov = prior_precision_.cwiseInverse();
  for (int pass = 0; pass < 2; ++pass) {
    const double inv = 1 / (noise * noise);
    if (dual_) {
      // Woodbury: mean = m0 + P^-1 X^T K^-1 (y - X m0), K = S + X P^-1 X^T, S = diag(noise^2 / weight).
      obs_noise_.resize(static_cast<Eigen::Index>(n));
      for (size_t i = 0; i < n; ++i) obs_noise_(static_cast<Eigen::Index>(i)) = 1 / (weight[i] * inv);
      Eigen::MatrixXd k = xmat_ * prior_cov.asDiagonal() * xmat_.transpose();
      k.diagonal() += obs_noise_;
      kernel_llt_.compute(k);
      mean_ = prior_mean_ + prior_cov.cwiseProduct(xmat_.transpose() * kernel_llt_.solve(y - xmat_ * prior_mean_));
    } else {
      Eigen::MatrixXd a = prior_precision_.asDiagonal();
      Eigen::VectorXd b = prior_precision_.cwiseProduct(prior_mean_);
      for (size_t i = 0; i < n; ++i) {
        a.selfadjointView<Eigen::Lower>().rankUpdate(xs_[i], weight[i] * inv);
        b += xs_[i] * (weight[i] * inv * ys_[i]);
      }
      a = a.selfadjointView<Eigen::Lower>();
      llt.compute(a);
      mean_ = llt.solve(b);
    }
    if (n < 6 || pass == 1) break;
    // Robust noise scale from the residuals (MAD), then Huber weights for the second pass.
    std::vector<double> r(n), mag(n);
    for (size_t i = 0; i < n; ++i) {
      r[i] = ys_[i] - xs_[i].dot(mean_);
      mag[i] = std::fabs(r[i]);
    }
    std::nth_element(mag.begin(), mag.begin() + n / 2, mag.end());
    noise = std::clamp(1.4826 * mag[n / 2], 0.02, 0.5);
    for (size_t i = 0; i < n; ++i) {
      weight[i] = std::fabs(r[i]) <= kHuber * noise ? 1.0 : kHuber * noise / std::fabs(r[i]);
    }
  }
  if (!dual_) chol_upper_ = llt.matrixU();
}

Eigen::VectorXd GuidedSurrogate::Sample(std::mt19937_64& rng) const {
  std::normal_distribution<double> normal(0, 1);
  Eigen::VectorXd z(width_);
  for (int64_t i = 0; i < width_; ++i) z(i) = normal(rng);
  if (!dual_) {
    // Precision = U^T U, so U^{-1} z has covariance U^{-1} U^{-T} = precision^{-1}.
    return mean_ + chol_upper_.triangularView<Eigen::Upper>().solve(z);
  }
  // Matheron's rule: a prior draw w0 and noise e, corrected by the data, is a posterior draw:
  // w = w0 + P^-1 X^T K^-1 (y - X w0 - e).
  const Eigen::VectorXd prior_cov = prior_precision_.cwiseInverse();
  Eigen::VectorXd w0 = prior_mean_ + prior_cov.cwiseSqrt().cwiseProduct(z);
  const Eigen::Index n = xmat_.rows();
  if (n == 0) return w0;
  Eigen::VectorXd e(n);
  for (Eigen::Index i = 0; i < n; ++i) e(i) = std::sqrt(obs_noise_(i)) * normal(rng);
  const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(ys_.data(), n);
  return w0 + prior_cov.cwiseProduct(xmat_.transpose() * kernel_llt_.solve(y - xmat_ * w0 - e));
}

double GuidedSurrogate::SiteTerm(const Eigen::VectorXd& w, int64_t site, int choice) const {
  const size_t n = defaults_.size();
  if (site < 0 || static_cast<size_t>(site) >= n || choice == defaults_[site] || choice < 0) return 0;
  int64_t idx = choice < defaults_[site] ? choice : choice - 1;
  int64_t col = offset_[site] + idx;
  int64_t end = static_cast<size_t>(site) + 1 < offset_.size() ? offset_[site + 1] : width_;
  if (col >= end) return 0;
  double gain = static_cast<size_t>(site) < site_gain_.size() ? site_gain_[site] : 0.0;
  return (w(1) + w(2) * gain) / static_cast<double>(n) + w(col);
}

double GuidedSurrogate::Score(const Eigen::VectorXd& w, const DecisionVector& v) const {
  return Features(v).dot(w);
}

std::vector<DecisionVector> GuidedSurrogate::ImprovingMoves(const Eigen::VectorXd& w, const DecisionVector& inc,
                                                            size_t max_flips) const {
  std::vector<std::pair<double, int64_t>> gain;  // (change of the score, site)
  std::vector<int> best_choice(inc.size(), 0);
  const int64_t sites = static_cast<int64_t>(std::min(inc.size(), choices_.size()));
  for (int64_t s = 0; s < sites; ++s) {
    const double now = SiteTerm(w, s, inc[s]);
    double best = now;
    for (int c = 0; c < choices_[s]; ++c) {
      const double t = SiteTerm(w, s, c);
      if (c != inc[s] && t < best) {
        best = t;
        best_choice[s] = c;
      }
    }
    if (best < now) gain.emplace_back(best - now, s);
  }
  std::sort(gain.begin(), gain.end());
  std::vector<DecisionVector> out;
  const size_t most = std::min(max_flips, gain.size());
  for (size_t k = 1; k <= most; k *= 2) {
    DecisionVector v = inc;
    for (size_t j = 0; j < k; ++j) v[gain[j].second] = best_choice[gain[j].second];
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace hlox
