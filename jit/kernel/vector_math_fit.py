#!/usr/bin/python3
"""Derives the polynomial coefficients of jit/kernel/vector_math.cc.

Writes jit/kernel/vector_math_coefficients.h. Each approximation is a minimax fit
(Remez exchange on a dense grid, 60-digit decimal arithmetic) of a smooth
function on the reduced interval vector_math.cc evaluates it on, with the
weight that makes the error relative where the caller needs it to be. The
reference values come from power series and decimal exp/ln evaluated here;
nothing is taken from any library's tables.

Usage: /usr/bin/python3 jit/kernel/vector_math_fit.py > jit/kernel/vector_math_coefficients.h
"""

import decimal
import math
import struct
import sys

from decimal import Decimal as D

decimal.getcontext().prec = 90
ctx = decimal.getcontext()

PI = None


def pi():
    global PI
    if PI is None:
        # Machin: pi = 16 atan(1/5) - 4 atan(1/239).
        PI = 16 * atan_series(D(1) / 5) - 4 * atan_series(D(1) / 239)
    return PI


def atan_series(z):
    total, term, k = D(0), z, 0
    z2 = z * z
    while True:
        t = term / (2 * k + 1)
        if abs(t) < D(10) ** -85:
            break
        total += t if k % 2 == 0 else -t
        term *= z2
        k += 1
    return total


def atan(z):
    # Halve the argument until the series converges fast.
    k = 0
    while abs(z) > D("0.2"):
        z = z / (1 + (1 + z * z).sqrt())
        k += 1
    return atan_series(z) * (2 ** k)


def sin(x):
    total, term, k = D(0), x, 1
    while abs(term) > D(10) ** -85:
        total += term
        term = -term * x * x / ((k + 1) * (k + 2))
        k += 2
    return total


def cos(x):
    total, term, k = D(0), D(1), 0
    while abs(term) > D(10) ** -85:
        total += term
        term = -term * x * x / ((k + 1) * (k + 2))
        k += 2
    return total


def erf(x):
    # erf(x) = 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n+1)); 90 digits
    # absorb the cancellation up to x = 6.
    total, term, n = D(0), x, 0
    while True:
        t = term / (2 * n + 1)
        if abs(t) < D(10) ** -80 and n > 5:
            break
        total += t
        n += 1
        term = -term * x * x / n
    return total * 2 / pi().sqrt()


def tanh(x):
    e = (2 * x).exp()
    return (e - 1) / (e + 1)


def atanh(s):
    return ((1 + s) / (1 - s)).ln() / 2


def solve(a, b):
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c and m[r][c] != 0:
                f = m[r][c] / m[c][c]
                for k in range(c, n + 1):
                    m[r][k] -= f * m[c][k]
    return [m[i][n] / m[i][i] for i in range(n)]


def horner(c, w):
    r = D(0)
    for k in reversed(c):
        r = r * w + k
    return r


def remez(f, weight, lo, hi, degree, grid=1500, iterations=12):
    """Minimax polynomial of `degree` for f on [lo, hi], error * weight."""
    lo, hi = D(lo), D(hi)
    n = degree + 2
    half = (hi - lo) / 2
    mid = (hi + lo) / 2
    pts = [mid - half * D(math.cos(math.pi * i / (grid - 1))) for i in range(grid)]
    fv = [f(p) for p in pts]
    wv = [weight(p, v) for p, v in zip(pts, fv)]
    idx = [round(i * (grid - 1) / (n - 1)) for i in range(n)]
    best = None
    for _ in range(iterations):
        a = [[D(1)] + [pts[i] ** k for k in range(1, degree + 1)] + [D((-1) ** j) / wv[i]]
             for j, i in enumerate(idx)]
        sol = solve(a, [fv[i] for i in idx])
        c = sol[:-1]
        err = [(horner(c, p) - v) * w for p, v, w in zip(pts, fv, wv)]
        m = max(abs(e) for e in err)
        if best is None or m < best[0]:
            best = (m, c)
        # Alternating extrema: one per sign run, the largest of each run.
        runs = []
        for i, e in enumerate(err):
            s = e >= 0
            if runs and runs[-1][0] == s:
                if abs(e) > abs(err[runs[-1][1]]):
                    runs[-1] = (s, i)
            else:
                runs.append((s, i))
        while len(runs) > n:
            # Drop the smaller end (keeps alternation).
            if abs(err[runs[0][1]]) < abs(err[runs[-1][1]]):
                runs.pop(0)
            else:
                runs.pop()
        if len(runs) < n:
            break
        idx = [r[1] for r in runs]
    return best[1], best[0], pts, fv, wv


def to_f32(x):
    return struct.unpack("f", struct.pack("f", float(x)))[0]


def rounded(c, f32):
    return [to_f32(v) if f32 else float(v) for v in c]


def error_of(c, pts, fv, wv):
    return max(abs((horner([D(v) for v in c], p) - v) * w) for p, v, w in zip(pts, fv, wv))


def hexf(v, f32):
    if v == 0:
        return "0.0"
    return v.hex() if not f32 else float(v).hex()


def emit(name, c, f32, err, what, exact_err=None):
    suffix = "f32" if f32 else "f64"
    bits = -math.log2(float(err)) if err > 0 else 999
    extra = ""
    if exact_err is not None and exact_err > 0:
        extra = f" (2^-{-math.log2(float(exact_err)):.1f} before rounding)"
    print(f"// {what}: max weighted error 2^-{bits:.1f}{extra}.")
    print(f"inline constexpr double k{name}_{suffix}[] = {{")
    for v in c:
        print(f"    {hexf(v, f32)},")
    print("};")


def fit(name, f, weight, lo, hi, degrees, what):
    for f32 in (True, False):
        degree = degrees[0] if f32 else degrees[1]
        c, e, pts, fv, wv = remez(f, weight, lo, hi, degree)
        cr = rounded(c, f32)
        emit(name, cr, f32, error_of(cr, pts, fv, wv), what, e)
        sys.stdout.flush()


def rel(p, v):
    return 1 / abs(v)


def tiny(w):
    return w if w != 0 else D(10) ** -30


def round_bits(x, bits):
    """x (Decimal) rounded to nearest with `bits` significant bits, as a float."""
    from fractions import Fraction
    q = Fraction(x)
    if q == 0:
        return 0.0
    e = math.floor(math.log2(abs(float(q))))
    # Fix e so that 2^e <= |q| < 2^(e+1).
    while Fraction(2) ** e > abs(q):
        e -= 1
    while Fraction(2) ** (e + 1) <= abs(q):
        e += 1
    scaled = q / Fraction(2) ** (e - bits + 1)
    n = round(scaled)  # Python rounds half to even.
    return float(Fraction(n) * Fraction(2) ** (e - bits + 1))


def emit_constants():
    """Constants split into parts: hi has few enough bits for exact products."""
    ln2 = D(2).ln()
    p = pi()
    rows = []
    for f32, prec, ln2_bits in ((True, 24, 16), (False, 53, 42)):
        sfx = "f32" if f32 else "f64"
        def split(name, v, hi_bits=prec, parts=2):
            rest = v
            for i in range(parts):
                part = round_bits(rest, hi_bits if i == 0 else prec)
                rows.append((f"k{name}{i}_{sfx}", part, f32))
                rest = rest - D(part)
        split("Ln2Part", ln2, ln2_bits)
        split("PiOver2Part", p / 2, prec, 4)
        split("PiPart", p)
        split("HalfPiPart", p / 2)
        split("QuarterPiPart", p / 4)
        split("TwoThirdsPart", D(2) / 3)
        rows.append((f"kLog2e_{sfx}", round_bits(1 / ln2, prec), f32))
        split("TwoOverPiPart", 2 / p)
        rows.append((f"kCbrt2_{sfx}", round_bits((ln2 / 3).exp(), prec), f32))
        rows.append((f"kCbrt4_{sfx}", round_bits((2 * ln2 / 3).exp(), prec), f32))
        rows.append((f"kTanPiOver8_{sfx}", round_bits(D(2).sqrt() - 1, prec), f32))
    print("// Constants rounded to the type; NamePart0 + NamePart1 (+ Part2) is the")
    print("// value to about three times the precision. kLn2Part0 has 16 (f32) or 42")
    print("// (f64) significant bits, so its products with exponents are exact.")
    for name, v, f32 in rows:
        print(f"inline constexpr double {name} = {v.hex()};")
    print()


def main():
    print("// Generated by jit/kernel/vector_math_fit.py: minimax polynomial coefficients")
    print("// (lowest degree first) for jit/kernel/vector_math.cc. Do not edit by hand.")
    print("#ifndef XJIT_JIT_VECTOR_MATH_COEFFICIENTS_H_")
    print("#define XJIT_JIT_VECTOR_MATH_COEFFICIENTS_H_")
    print()
    print("namespace xjit::jit::vector_math_coefficients {")
    print()
    emit_constants()
    ln2 = D(2).ln()
    # exp(r) = 1 + r + r^2 Q(r), |r| <= ln2/2 (+ margin); Q relative.
    r_max = ln2 / 2 * D("1.0005")

    def exp_q(r):
        r = tiny(r)
        return (r.exp() - 1 - r) / (r * r)
    fit("ExpQ", exp_q, rel, -r_max, r_max, (4, 10),
        "exp(r) = 1 + r + r^2 Q(r) on |r| <= ln2/2")

    # log(1+f) = 2 atanh(s), s = f/(2+f): = f - (f^2/2 - s (f^2/2 + z P(z))),
    # z = s^2 in [0, ((sqrt2-1)/(sqrt2+1))^2].
    s_max = (D(2).sqrt() - 1) / (D(2).sqrt() + 1)
    z_max = s_max * s_max * D("1.001")

    def log_p(z):
        z = tiny(z)
        s = z.sqrt()
        return (2 * atanh(s) - 2 * s) / (s * z)
    fit("LogP", log_p, rel, z_max * D("1e-6"), z_max, (2, 7),
        "2 atanh(s) = 2s + s z P(z), z = s^2 <= 0.0295")

    # For pow's double-word log: P(z) = 2/3 + z P2(z).
    def log_p2(z):
        z = tiny(z)
        return (log_p(z) - D(2) / 3) / z
    fit("LogP2", log_p2, rel, z_max * D("1e-6"), z_max, (3, 7), "P(z) = 2/3 + z P2(z)")

    # tanh(x) = x + x^3 T(x^2), |x| <= 0.55.
    def tanh_t(w):
        w = tiny(w)
        x = w.sqrt()
        return (tanh(x) - x) / (x * w)
    fit("TanhT", tanh_t, rel, D("0.3025e-6"), D("0.3025"), (4, 10), "tanh(x) = x + x^3 T(x^2), |x| <= 0.55")

    # sin(r) = r + r^3 S(r^2), cos(r) = 1 - r^2/2 + r^4 C(r^2), |r| <= pi/4 + margin.
    w_max = (pi() / 4 * D("1.001")) ** 2

    def sin_s(w):
        w = tiny(w)
        r = w.sqrt()
        return (sin(r) - r) / (r * w)

    def cos_c(w):
        w = tiny(w)
        r = w.sqrt()
        return (cos(r) - 1 + w / 2) / (w * w)
    fit("SinS", sin_s, rel, w_max * D("1e-6"), w_max, (3, 7), "sin(r) = r + r^3 S(r^2), |r| <= pi/4")
    fit("CosC", cos_c, rel, w_max * D("1e-6"), w_max, (3, 7), "cos(r) = 1 - r^2/2 + r^4 C(r^2), |r| <= pi/4")

    # atan(z) = z + z^3 A(z^2), |z| <= tan(pi/8).
    t8 = D(2).sqrt() - 1

    def atan_a(w):
        w = tiny(w)
        z = w.sqrt()
        return (atan(z) - z) / (z * w)
    fit("AtanA", atan_a, rel, t8 * t8 * D("1e-6"), t8 * t8 * D("1.001"), (5, 11),
        "atan(z) = z + z^3 A(z^2), |z| <= tan(pi/8)")

    # erf(x) = x + x E(x^2), |x| <= 0.875; weight relative to erf(x)/x.
    def erf_e(w):
        w = tiny(w)
        x = w.sqrt()
        return erf(x) / x - 1

    def erf_weight(w, v):
        return 1 / (1 + v)
    fit("ErfSmall", erf_e, erf_weight, D("0.765625e-6"), D("0.765625"), (5, 11),
        "erf(x) = x + x E(x^2), |x| <= 0.875")

    # erfc(x) = exp(-x^2) t H(t), t = 1/x: f32 on [0.875, 4] (one piece),
    # f64 on [0.875, 2.25] (H1) and [2.25, 6] (H2).
    def erfc_h(t):
        x = 1 / t
        return (1 - erf(x)) * (x * x).exp() * x
    # H is fitted in u = t - center (smaller coefficients, less cancellation).
    for name, f32, lo, hi, degree, center in (
            ("ErfcH", True, D("0.875"), D(4), 9, D("0.6875")),
            ("ErfcH1", False, D("0.875"), D("2.25"), 18, D("0.796875")),
            ("ErfcH2", False, D("2.25"), D(6), 13, D("0.3046875"))):
        c, e, pts, fv, wv = remez(lambda u: erfc_h(u + center), rel, 1 / hi - center,
                                  1 / lo - center, degree, grid=800)
        cr = rounded(c, f32)
        emit(name, cr, f32, error_of(cr, pts, fv, wv),
             f"erfc(x) = exp(-x^2) t H(t - {center}), t = 1/x, x in [{lo}, {hi}]", e)
        sys.stdout.flush()

    # cbrt(m) on [1, 8): a rough start for Newton's iteration.
    def cbrt_f(m):
        return (m.ln() / 3).exp()
    fit("CbrtStart", cbrt_f, rel, 1, 2, (3, 4), "cbrt(m) on [1, 2), starting value")

    print("}  // namespace xjit::jit::vector_math_coefficients")
    print()
    print("#endif  // XJIT_JIT_VECTOR_MATH_COEFFICIENTS_H_")


if __name__ == "__main__":
    main()
