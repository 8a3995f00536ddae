// The online surrogate of guided search (and of evolution's model children): Bayesian linear
// regression of log(cost / baseline) on
// features of a configuration: an intercept, the fraction of sites changed from the defaults,
// the learned advantage model's mean predicted gain over the changed sites, and one indicator
// per (site, non-default choice). Each feature group has its own Gaussian prior (the advantage
// feature's prior says "the model is right"); the fit is robust (one Huber reweighting) because
// measured costs on a loaded machine have heavy tails. Thompson samples of the weights rank
// candidate configurations; the posterior mean picks the incumbent to mutate.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include <Eigen/Dense>

#include "passes/pass.h"

namespace hlox {

class GuidedSurrogate {
 public:
  // `choices[s]`: number of choices of site s; `site_gain[s]`: the advantage model's predicted
  // scaled advantage of changing site s away from its default (negative: predicted faster).
  GuidedSurrogate(const std::vector<int>& choices, const DecisionVector& defaults,
                  const std::vector<float>& site_gain);

  // Records one evaluated configuration; `log_ratio` = log(cost / baseline cost), finite.
  void Add(const DecisionVector& v, double log_ratio);
  // Recomputes the posterior from every recorded configuration.
  void Fit();
  // A weight vector drawn from the posterior (after Fit; the prior before any data).
  Eigen::VectorXd Sample(std::mt19937_64& rng) const;
  // Predicted log(cost / baseline) of `v` under weights `w` (a sample, or mean()).
  double Score(const Eigen::VectorXd& w, const DecisionVector& v) const;
  // The model is additive over sites: Score(w, v) = w(0) + sum over sites of
  // SiteTerm(w, s, v[s]). SiteTerm is 0 for the default choice (and for out-of-range input).
  double SiteTerm(const Eigen::VectorXd& w, int64_t site, int choice) const;
  // The changes of `inc` that weights `w` expect to pay, exact because the model is additive:
  // for k = 1, 2, 4, ... up to `max_flips`, `inc` with the k most promising sites each set to
  // their best choice under `w`. Empty when `w` expects no single-site change to pay.
  std::vector<DecisionVector> ImprovingMoves(const Eigen::VectorXd& w, const DecisionVector& inc,
                                             size_t max_flips) const;
  const Eigen::VectorXd& mean() const { return mean_; }
  // Weight of the advantage-model feature in the posterior mean (positive: the model helps).
  double model_weight() const { return mean_(2); }
  int64_t observations() const { return static_cast<int64_t>(ys_.size()); }

 private:
  Eigen::VectorXd Features(const DecisionVector& v) const;

  std::vector<int> choices_;
  DecisionVector defaults_;
  std::vector<float> site_gain_;
  std::vector<int64_t> offset_;     // first indicator column of each site
  int64_t width_ = 0;
  Eigen::VectorXd prior_mean_, prior_precision_;
  std::vector<Eigen::VectorXd> xs_;
  std::vector<double> ys_;
  Eigen::VectorXd mean_;
  // Weight space (features <= observations): the posterior precision's Cholesky factor.
  Eigen::MatrixXd chol_upper_;      // U with U^T U = posterior precision
  // Observation space (more features than observations): the feature rows, the observations'
  // noise variances and the factor of K = diag(noise) + X P^-1 X^T.
  bool dual_ = false;
  Eigen::MatrixXd xmat_;
  Eigen::VectorXd obs_noise_;
  Eigen::LLT<Eigen::MatrixXd> kernel_llt_;
};

}  // namespace hlox
