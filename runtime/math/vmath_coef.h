// Constants of the f32 vector math formulas (runtime/isa/simd/math.h, and the fused loop's
// generated code in fused/jit.cc, which must emit the same values).
#pragma once

#include <cstdint>

namespace hlox::rt::vmath::coef {

// exp(r) = 1 + r + r^2 * P(r) on [-ln2/2, ln2/2] (P: Lawson-weighted minimax fit).
constexpr float kExpP0 = 0.49999994f, kExpP1 = 0.16666521f, kExpP2 = 0.041668389f,
                kExpP3 = 0.0083687101f, kExpP4 = 0.0013814613f;
constexpr float kLog2e = 1.44269504f;
constexpr float kLn2Hi = 0.693145752f;          // ln2 split: hi has 16 trailing zero bits
constexpr float kLn2Lo = 1.42860677e-06f;
constexpr float kExpHi = 89.0f, kExpLo = -104.0f;  // beyond: inf / 0 after scaling

// tanh(x) = x * A(x^2) / B(x^2) for |x| <= kTanhClamp (where the quotient rounds to +-1), x
// itself below kTanhTiny. A's coefficients from x^1 to x^13, B's from x^0 to x^6 (the
// rational approximation Eigen 3.4 uses for f32 tanh with FMA).
constexpr float kTanhClamp = 7.99881172180175781f;
constexpr float kTanhTiny = 0.0004f;
constexpr float kTanhA[7] = {4.89352455891786e-03f,  6.37261928875436e-04f, 1.48572235717979e-05f,
                             5.12229709037114e-08f,  -8.60467152213735e-11f, 2.00018790482477e-13f,
                             -2.76076847742355e-16f};
constexpr float kTanhB[4] = {4.89352518554385e-03f, 2.26843463243900e-03f, 1.18534705686654e-04f,
                             1.19825839466702e-06f};

// log(1 + f) = f + f^2 * P(f) for f in [sqrt(1/2) - 1, sqrt(2) - 1] (P: degree 8, weighted
// least squares iterated towards minimax on the relative error, fitted for hlox; 0.13 ulp
// before rounding). P's coefficients from f^0 to f^8.
constexpr float kLogP[9] = {-0.49999988079071045f, 0.3333330750465393f,  -0.2500152289867401f,
                            0.2000301480293274f,   -0.16611148416996002f, 0.1416347324848175f,
                            -0.13208812475204468f, 0.13004808127880096f, -0.07823304831981659f};
// erf(x) = x * P(x^2) / Q(x^2) for |x| <= kErfClamp (beyond it erf rounds to +-1 in f32). P:
// degree 6 in x^2, Q: degree 4 with Q(0) = 1, fitted for hlox by least squares reweighted towards
// minimax on the relative error over [0, kErfClamp] (1.1 ulp with these f32 coefficients in
// exact arithmetic). Coefficients from the constant term up.
constexpr float kErfClamp = 3.925f;
constexpr float kErfP[7] = {1.128379107e+00f, 1.998632550e-01f,  5.056373030e-02f, 3.697933862e-03f,
                            1.416772138e-04f, -1.955248990e-06f, 1.989110920e-08f};
constexpr float kErfQ[5] = {1.000000000e+00f, 5.104559064e-01f, 1.149716005e-01f, 1.434675697e-02f,
                            9.548699018e-04f};

constexpr int32_t kSqrtHalfBits = 0x3f3504f3;  // the bits of sqrt(1/2) rounded to f32
constexpr float kTwo23 = 8388608.0f;
constexpr float kFltMin = 1.17549435e-38f;      // smallest normal
constexpr float kFltTrueMin = 1.40129846e-45f;  // smallest denormal
constexpr float kFltMax = 3.40282347e+38f;

}  // namespace hlox::rt::vmath::coef
