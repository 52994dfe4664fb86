#!/usr/bin/python3
"""DCE fit vs scipy: Fluxmap's Nelder-Mead cost against scipy.optimize.minimize('Nelder-Mead').

Reads the JSON written by `test-dce-accuracy --dump-scipy FILE` (frame times, inputs, start,
bounds, stopping rule, and per voxel the tissue curve with Fluxmap's fitted parameters and cost),
recomputes the model with an independent NumPy implementation (time-domain recursion instead of
the kernels' Fourier-domain convolution), and prints TAP:
  1. the NumPy cost at Fluxmap's parameters equals Fluxmap's cost (the two models agree);
  2. per voxel, Fluxmap's cost <= scipy's cost (same start: the voxel's "start" when given,
     else "initial"; same stopping rule) within 1e-6 relative.
Skips when scipy or numpy is missing.
"""
import json
import math
import sys

try:
    import numpy as np
    from scipy.optimize import minimize
    from scipy.signal import lfilter
except ImportError as e:  # Debian: apt install python3-scipy
    print("1..0 # SKIP scipy/numpy not available (%s)" % e)
    sys.exit(0)

RATE_PER_S = 1.0 / 6000.0  # ml/100g/min -> 1/s (tissue density 1 g/ml)


class Model:
    """Cl = (ka Ca(t - tau_a) + kp Cp(t - tau_p)) conv exp(-kl t) on a uniform grid.

    The grid starts at the first frame with step dt (the smallest frame interval unless given);
    inputs are linearly interpolated onto it and held at their last value; a delay shifts the
    baseline-subtracted input, linearly interpolated between grid points, with the first value
    held before the start; the convolution is the trapezoid rule; frames are read back by linear
    interpolation between grid points. Bounds clamp the parameters inside the cost, as Fluxmap's.
    """

    def __init__(self, d):
        self.t = np.asarray(d["times_s"], float)
        ca = np.asarray(d["ca"], float)
        cp = np.asarray(d["cp"], float)
        dt = d.get("model_dt_s", 0.0) or float(np.min(np.diff(self.t)))
        span = self.t[-1] - self.t[0]
        m = int(math.floor(span / dt + 1e-9)) + 1
        if self.t[0] + (m - 1) * dt < self.t[-1] - 1e-9 * dt:
            m += 1
        self.dt, self.m = dt, m
        grid = self.t[0] + dt * np.arange(m)
        self.ca_g = np.interp(grid, self.t, ca)
        self.cp_g = np.interp(grid, self.t, cp)
        pos = (self.t - self.t[0]) / dt
        j = np.floor(pos + 1e-9).astype(int)
        w = pos - j
        w[(np.abs(w) < 1e-9) | (j >= m - 1)] = 0.0
        self.fj = np.minimum(j, m - 1)
        self.fw = w
        self.lower = np.asarray(d["lower"], float)
        self.upper = np.asarray(d["upper"], float)

    def delayed(self, g, tau):
        base = g[0]
        s = tau / self.dt
        k = int(math.floor(s))
        f = s - k
        dev = g - base
        shifted = np.zeros(self.m)
        for lag, weight in ((k, 1.0 - f), (k + 1, f)):
            if weight == 0.0 or lag >= self.m:
                continue
            shifted[lag:] += weight * dev[: self.m - lag]
        return base + shifted

    def curve(self, theta):
        th = np.clip(np.asarray(theta, float), self.lower, self.upper)
        ka, kp, kl = th[0] * RATE_PER_S, th[1] * RATE_PER_S, th[2] * RATE_PER_S
        u = ka * self.delayed(self.ca_g, th[3]) + kp * self.delayed(self.cp_g, th[4])
        e = math.exp(-kl * self.dt)
        run = lfilter([1.0], [1.0, -e], u)  # sum_{m<=j} u_m e^{j-m}
        ej = e ** np.arange(self.m)
        cl = self.dt * (run - 0.5 * u - 0.5 * u[0] * ej)
        c0 = cl[self.fj]
        c1 = cl[np.minimum(self.fj + 1, self.m - 1)]
        return np.where(self.fw == 0.0, c0, (1.0 - self.fw) * c0 + self.fw * c1)

    def cost(self, theta, tissue):
        # Fluxmap's objective: the clamped model's squared residuals (eq. 3), times
        # 1 + sum |theta - clamped| / (upper - lower) outside the bounds, so that the cost is not
        # flat there (kernels/dce/dce_math.h, fm_dce_eval_setup).
        th = np.asarray(theta, float)
        clamped = np.clip(th, self.lower, self.upper)
        penalty = 1.0 + float(np.sum(np.abs(th - clamped) / (self.upper - self.lower)))
        r = self.curve(clamped) - tissue
        return float(np.dot(r, r)) * penalty


def main():
    if len(sys.argv) != 2:
        print("usage: test-dce-scipy.py DUMP.json", file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        d = json.load(f)
    model = Model(d)
    voxels = d["voxels"]
    print("1..%d" % (2 * len(voxels)))
    failures = 0
    n = 0
    for v, vox in enumerate(voxels):
        tissue = np.asarray(vox["tissue"], float)
        fm_theta = np.asarray(vox["theta"], float)
        fm_cost = float(vox["cost"])
        np_cost = model.cost(fm_theta, tissue)
        # Same model, different arithmetic (recursion vs FFT): they agree to ~1e-12. Fluxmap
        # reports the clamped parameters but the cost of its best vertex, which may lie just
        # outside a bound and carry the penalty factor 1 + |excess| / range: the NumPy cost at
        # the clamped parameters is then never higher and lower by at most 1e-6 relative.
        ok = (np_cost <= fm_cost * (1.0 + 1e-12) + 1e-15
              and fm_cost - np_cost <= 1e-6 * fm_cost + 1e-15)
        n += 1
        print("%s %d - voxel %d: NumPy cost %.12g vs Fluxmap %.12g at its optimum"
              % ("ok" if ok else "not ok", n, v, np_cost, fm_cost))
        failures += not ok
        # The same start as Fluxmap's fit: the voxel's grid start, or the fixed initial point.
        start = vox.get("start", d["initial"])
        res = minimize(model.cost, np.asarray(start, float), args=(tissue,),
                       method="Nelder-Mead",
                       options={"maxiter": d["max_iterations"], "maxfev": 10**9,
                                "fatol": d["tolerance"], "xatol": math.inf,
                                "initial_simplex": None})
        sp_cost = model.cost(res.x, tissue)
        # "No worse than scipy within 1e-6 relative", plus an absolute floor at the stopping
        # tolerance for noise-free curves whose optimum is ~0.
        ok = np_cost <= sp_cost * (1.0 + 1e-6) + d["tolerance"]
        n += 1
        print("%s %d - voxel %d: Fluxmap cost %.10g <= scipy %.10g (scipy %d iterations, "
              "theta %s)" % ("ok" if ok else "not ok", n, v, np_cost, sp_cost, res.nit,
                             np.array2string(res.x, precision=4)))
        failures += not ok
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
