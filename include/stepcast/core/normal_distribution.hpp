// The standard normal distribution, in one place: the straggler model's order statistics and the
// intervals' offset between sources both read it.
#pragma once

namespace stepcast {

double standard_normal_pdf(double x);
double standard_normal_cdf(double x);

/// The x below which a standard normal variable lies with probability p, 0 < p < 1: the cdf
/// inverted by bisection, to double precision.
double standard_normal_quantile(double p);

}  // namespace stepcast
