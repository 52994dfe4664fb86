/* FLIM defaults from the data, against known truth: the simulator's offset time zero, lifetimes
 * and background, an IRF recorded with 16 times finer bins, a period shorter than the TAC range,
 * the photon threshold's rule and the hint to bin. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/flim/flim_auto.h"
#include "app/core/flim/flim_irf.h"
#include "app/core/flim/flim_sim.h"
#include "app/core/flim/flim_window.h"
#include "app/core/method.h"
#include "app/core/params.h"

static fm_dataset *simulate(fm_flim_sim_params *p)
{
    g_autoptr(GError) error = NULL;
    fm_dataset *ds = fm_flim_simulate(p, &error);
    g_assert_no_error(error);
    return ds;
}

static fm_result *run_kv(const char *id, fm_dataset *ds, const char *const *kv)
{
    const fm_method *method = fm_method_find(id);
    g_assert_nonnull(method);
    g_autoptr(fm_params) params = fm_method_default_params(method);
    for (int i = 0; kv && kv[i]; i += 2) {
        g_autoptr(GError) local = NULL;
        g_assert_true(fm_params_set_from_string(params, kv[i], kv[i + 1], &local));
        g_assert_no_error(local);
    }
    fm_job_context context = {.backend = FM_BACKEND_CPU};
    g_autoptr(GError) error = NULL;
    fm_result *result = fm_method_run(method, ds, params, NULL, &context, &error);
    g_assert_no_error(error);
    g_assert_nonnull(result);
    return result;
}

/* Expected photons per bin of exponential(tau) + N(mu, sigma^2) from the density (not the
 * simulator's distribution function): f(t) = exp(s^2 / 2 tau^2 - (t - mu) / tau)
 * Phi((t - mu) / s - s / tau) / tau, by the midpoint rule with 64 points per bin. */
static double exgauss_bin(double lo, double hi, double tau, double mu, double s)
{
    double sum = 0.0, h = (hi - lo) / 64;
    for (int k = 0; k < 64; k++) {
        double t = lo + (k + 0.5) * h, u = (t - mu) / s - s / tau;
        sum += exp(s * s / (2 * tau * tau) - (t - mu) / tau) * 0.5 * erfc(-u / G_SQRT2) / tau;
    }
    return sum * h;
}

/* Mean of map values over the pixels of one bar with a finite value. */
static double bar_mean(const fm_flim_sim_params *p, const float *map, int bar)
{
    double s = 0;
    int n = 0;
    for (int i = 0; i < p->width * p->height; i++)
        if (fm_flim_sim_bar_of(p, i % p->width) == bar && isfinite(map[i]))
            s += map[i], n++;
    return n ? s / n : NAN;
}

/* Time zero 2 ns into the window (IRF sigma 100 ps): the auto window starts at the decay's
 * peak, where the expected counts peak, and LSM, MLE and CMM with every parameter at its
 * default recover each bar's lifetime. */
static void test_offset_time_zero(void)
{
    fm_flim_sim_params p;
    fm_flim_sim_defaults(&p);
    p.width = 64;
    p.height = 8;
    p.photons = 2000;
    p.irf_sigma_ns = 0.1;
    p.irf_offset_ns = 2.0;
    p.seed = 21;
    g_autoptr(fm_dataset) ds = simulate(&p);
    const double bw = p.bin_width_ps * 1e-3;

    /* the peak of the expected summed decay, from the density above */
    double best = -1;
    int expected_peak = 0;
    for (int b = 0; b < p.n_bins; b++) {
        double m = 0;
        for (int bar = 0; bar < FM_FLIM_SIM_N_BARS; bar++)
            m += exgauss_bin(b * bw, (b + 1) * bw, fm_flim_sim_bar_tau_ns[bar], p.irf_offset_ns,
                             p.irf_sigma_ns);
        if (m > best)
            best = m, expected_peak = b;
    }
    fm_flim_window w;
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_flim_window_choose(ds, FM_FLIM_AUTO, FM_FLIM_AUTO, bw, 0.0,
                                        FM_FLIM_WINDOW_TAIL, FALSE, NULL, &w, &error));
    g_assert_no_error(error);
    g_test_message("expected peak bin %d, auto window [%d, %d), rise at %d", expected_peak, w.start,
                   w.end, w.shape.rise);
    g_assert_cmpint(abs(w.start - expected_peak), <=, 1);
    g_assert_cmpint(w.end, ==, p.n_bins); /* no background: the window runs to the end */
    g_assert_true(isnan(w.shape.background) || w.shape.background < 1e-3);

    /* 1.5 %: the tail from the peak still holds the IRF's last 0.5 sigma in its first bin; the
     * statistical error of a bar mean is ~0.1 % (see flim-accuracy) */
    const char *const ids[] = {"flim.lsm", "flim.mle", "flim.cmm"};
    for (gsize m = 0; m < G_N_ELEMENTS(ids); m++) {
        g_autoptr(fm_result) r = run_kv(ids[m], ds, NULL);
        g_assert_nonnull(strstr(r->note, "from the decay's peak"));
        const float *tau = fm_result_get_map(r, "tau")->data;
        GString *line = g_string_new(NULL);
        for (int bar = 0; bar < FM_FLIM_SIM_N_BARS; bar++) {
            double truth = fm_flim_sim_bar_tau_ns[bar], got = bar_mean(&p, tau, bar);
            g_string_append_printf(line, " %.1f: %.4f (%+.2f %%)", truth, got,
                                   100 * (got / truth - 1));
            g_assert_cmpfloat(fabs(got / truth - 1.0), <, 0.015);
        }
        g_test_message("%s defaults:%s; %s", ids[m], line->str, r->note);
        g_string_free(line, TRUE);
    }

    /* the old whole-range window, asked for explicitly, starts at bin 0 and says nothing */
    const char *const whole[] = {"fit_start_ns", "0",   "fit_end_ns", "0",
                                 "min_photons",  "100", NULL};
    g_autoptr(fm_result) old = run_kv("flim.cmm", ds, whole);
    g_assert_true(old->note == NULL || strstr(old->note, "fit window") == NULL);
    double biased = bar_mean(&p, fm_result_get_map(old, "tau")->data, 1);
    g_test_message("flim.cmm over every bin: 2.5 ns bar %.3f ns", biased);
    g_assert_cmpfloat(biased, >, 2.5 * 1.1); /* what the auto window is there to fix */
}

/* A known background of 0.5 counts per bin: the estimate from the bins before the rise matches
 * it, the auto window ends where the tail meets it, and a fit with a background term recovers
 * the lifetimes over the window to the end of the period. */
static void test_background(void)
{
    fm_flim_sim_params p;
    fm_flim_sim_defaults(&p);
    p.width = 64;
    p.height = 8;
    p.photons = 3000;
    p.irf_sigma_ns = 0.1;
    p.irf_offset_ns = 3.0;
    p.background = 0.5;
    p.seed = 22;
    g_autoptr(fm_dataset) ds = simulate(&p);
    const double bw = p.bin_width_ps * 1e-3;
    fm_flim_window w;
    g_assert_true(fm_flim_window_choose(ds, FM_FLIM_AUTO, FM_FLIM_AUTO, bw, 0.0,
                                        FM_FLIM_WINDOW_TAIL, FALSE, NULL, &w, NULL));
    const fm_flim_decay_shape *sh = &w.shape;
    const int n_px = p.width * p.height;
    /* Poisson: sd of the mean over n_px x bins values sqrt(0.5 / (n_px bins)) */
    const double sd = sqrt(p.background / ((double)n_px * MAX(sh->background_bins, 1)));
    g_test_message("background %.4f from bins %d..%d (truth %.2f, sd %.4f); window [%d, %d)",
                   sh->background, sh->background_first,
                   sh->background_first + sh->background_bins - 1, p.background, sd, w.start,
                   w.end);
    g_assert_cmpint(sh->background_bins, >=, 20); /* 3 ns of 100 ps bins before the rise */
    g_assert_cmpfloat(fabs(sh->background - p.background), <, 5 * sd);

    /* the tail of the summed decay meets the background where the 4 expected decays' sum,
     * less background, equals it: the window's end lies within a few bins of there */
    int meet = p.n_bins;
    for (int b = w.start; b < p.n_bins; b++) {
        double m = 0;
        for (int bar = 0; bar < FM_FLIM_SIM_N_BARS; bar++)
            m += p.photons / FM_FLIM_SIM_N_BARS *
                 exgauss_bin(b * bw, (b + 1) * bw, fm_flim_sim_bar_tau_ns[bar], p.irf_offset_ns,
                             p.irf_sigma_ns);
        if (m <= p.background) {
            meet = b;
            break;
        }
    }
    g_test_message("expected meeting bin %d, auto end %d", meet, w.end);
    g_assert_cmpint(abs(w.end - meet), <=, 3);
    g_assert_true(w.to_background);

    /* the first 8 bins outside the TAC's measured range (no counts at all, as a B&H ADC range
     * that starts late): not background, so left out of its estimate */
    g_autoptr(fm_dataset) copy = simulate(&p);
    for (gsize i = 0; i < (gsize)8 * n_px; i++)
        ((guint16 *)copy->data)[i] = 0;
    fm_flim_window wd;
    g_assert_true(fm_flim_window_choose(copy, FM_FLIM_AUTO, FM_FLIM_AUTO, bw, 0.0,
                                        FM_FLIM_WINDOW_TAIL, FALSE, NULL, &wd, NULL));
    g_test_message("dead first bins: background %.4f from bin %d on", wd.shape.background,
                   wd.shape.background_first);
    g_assert_cmpint(wd.shape.background_first, ==, 8);
    g_assert_cmpfloat(fabs(wd.shape.background - p.background), <, 6 * sd);
    g_assert_cmpint(wd.start, ==, w.start);

    /* with a background term the window runs to the end and the lifetimes come back */
    const char *const with_bg[] = {"fit_background", "true", NULL};
    g_autoptr(fm_result) r = run_kv("flim.mle", ds, with_bg);
    g_assert_nonnull(strstr(r->note, "to the end of the period"));
    g_assert_nonnull(strstr(r->note, "background before the rise"));
    const float *tau = fm_result_get_map(r, "tau")->data,
                *bg = fm_result_get_map(r, "background")->data;
    double bg_sum = 0;
    int bg_n = 0;
    for (int i = 0; i < n_px; i++)
        if (isfinite(bg[i]))
            bg_sum += bg[i], bg_n++;
    g_test_message("flim.mle fit_background: background %.4f per bin; bars %.3f %.3f %.3f %.3f",
                   bg_sum / bg_n, bar_mean(&p, tau, 0), bar_mean(&p, tau, 1), bar_mean(&p, tau, 2),
                   bar_mean(&p, tau, 3));
    for (int bar = 0; bar < FM_FLIM_SIM_N_BARS; bar++)
        g_assert_cmpfloat(fabs(bar_mean(&p, tau, bar) / fm_flim_sim_bar_tau_ns[bar] - 1), <, 0.02);
    g_assert_cmpfloat(fabs(bg_sum / bg_n - p.background), <, 0.05);
}

/* A Gaussian IRF written with 4096 bins over the data's 25.6 ns, as SPCM saves it beside a
 * 256-bin image: resampled onto the data's bins it keeps its area and its centroid, and LSM with
 * that file gives the lifetimes it gives with the IRF on the data's own bins. */
static void test_irf_resampled(void)
{
    const int n_fine = 4096, n_bins = 256;
    const double span = 25.6, fine = span / n_fine, bw = span / n_bins;
    const double mu = 1.03, sigma = 0.15;
    g_autofree double *src = g_new(double, n_fine);
    double area = 0, centroid = 0;
    for (int j = 0; j < n_fine; j++) {
        src[j] = 1e5 * 0.5 *
                 (erf(((j + 1) * fine - mu) / (sigma * G_SQRT2)) -
                  erf((j * fine - mu) / (sigma * G_SQRT2)));
        area += src[j];
        centroid += src[j] * (j + 0.5) * fine;
    }
    centroid /= area;
    g_autofree double *out = g_new(double, n_bins);
    fm_flim_resample_decay(src, n_fine, 0.0, fine, n_bins, bw, out);
    double out_area = 0, out_centroid = 0;
    for (int b = 0; b < n_bins; b++) {
        out_area += out[b];
        out_centroid += out[b] * (b + 0.5) * bw;
    }
    out_centroid /= out_area;
    g_test_message("4096 -> 256 bins: area %.9g -> %.9g, centroid %.6f -> %.6f ns (truth %.2f)",
                   area, out_area, centroid, out_centroid, mu);
    g_assert_cmpfloat(fabs(out_area / area - 1.0), <, 1e-12);
    /* bin centres of 100 ps against 6.25 ps: a centroid moves by far less than a bin */
    g_assert_cmpfloat(fabs(out_centroid - centroid), <, 0.01 * bw);
    /* a ratio that is not a whole number (1000 bins of 25.6 ps) keeps the area as well */
    double other[1000], other_area = 0;
    for (int j = 0; j < 1000; j++)
        other[j] = j % 7, other_area += other[j];
    fm_flim_resample_decay(other, 1000, 0.0, span / 1000, n_bins, bw, out);
    double sum = 0;
    for (int b = 0; b < n_bins; b++)
        sum += out[b];
    g_assert_cmpfloat(fabs(sum / other_area - 1.0), <, 1e-12);

    /* the same IRF as a file of values only (no bin width: it spans the data) and with a time
     * column, and the fits it gives against the IRF on the data's bins */
    fm_flim_sim_params p;
    fm_flim_sim_defaults(&p);
    p.width = 64;
    p.height = 8;
    p.photons = 2000;
    p.irf_sigma_ns = sigma;
    p.irf_offset_ns = mu;
    p.seed = 23;
    g_autoptr(fm_dataset) ds = simulate(&p);
    g_autofree char *dir = g_dir_make_tmp("flimauto-XXXXXX", NULL);
    g_autofree char *fine_path = g_build_filename(dir, "irf4096.csv", NULL);
    g_autofree char *timed_path = g_build_filename(dir, "irf4096-t.csv", NULL);
    g_autofree char *data_path = g_build_filename(dir, "irf256.csv", NULL);
    GString *a = g_string_new(NULL), *t = g_string_new("t_ns,irf\n"), *d = g_string_new(NULL);
    for (int j = 0; j < n_fine; j++) {
        g_string_append_printf(a, "%.10g\n", src[j]);
        g_string_append_printf(t, "%.8g,%.10g\n", j * fine, src[j]);
    }
    g_autofree float *irf = fm_flim_sim_irf(&p);
    for (int b = 0; b < n_bins; b++)
        g_string_append_printf(d, "%.10g\n", irf[b]);
    g_assert_true(g_file_set_contents(fine_path, a->str, -1, NULL));
    g_assert_true(g_file_set_contents(timed_path, t->str, -1, NULL));
    g_assert_true(g_file_set_contents(data_path, d->str, -1, NULL));
    g_string_free(a, TRUE);
    g_string_free(t, TRUE);
    g_string_free(d, TRUE);

    g_autoptr(GError) error = NULL;
    g_autoptr(GString) note = g_string_new(NULL);
    g_autofree float *loaded =
        fm_flim_load_decay_resampled(fine_path, n_bins, bw, "IRF", note, &error);
    g_assert_no_error(error);
    g_assert_nonnull(strstr(note->str, "IRF: 4096 bins resampled onto the data's 256 bins"));
    for (int b = 0; b < n_bins; b++)
        g_assert_cmpfloat(fabs(loaded[b] - irf[b]), <, 1e-6);
    g_string_truncate(note, 0);
    g_autofree float *timed =
        fm_flim_load_decay_resampled(timed_path, n_bins, bw, "IRF", note, &error);
    g_assert_no_error(error);
    g_assert_nonnull(strstr(note->str, "4096 bins of 6.25 ps resampled"));
    for (int b = 0; b < n_bins; b++)
        g_assert_cmpfloat(fabs(timed[b] - irf[b]), <, 1e-6);

    const char *const kv_fine[] = {"irf_file", fine_path, NULL};
    const char *const kv_data[] = {"irf_file", data_path, NULL};
    g_autoptr(fm_result) with_fine = run_kv("flim.lsm", ds, kv_fine);
    g_autoptr(fm_result) with_data = run_kv("flim.lsm", ds, kv_data);
    g_assert_nonnull(strstr(with_fine->note, "from the IRF's onset"));
    g_test_message("flim.lsm with the 4096-bin IRF: %s", with_fine->note);
    const float *tf = fm_result_get_map(with_fine, "tau")->data;
    const float *td = fm_result_get_map(with_data, "tau")->data;
    for (int bar = 0; bar < FM_FLIM_SIM_N_BARS; bar++) {
        double f = bar_mean(&p, tf, bar), e = bar_mean(&p, td, bar);
        double truth = fm_flim_sim_bar_tau_ns[bar];
        g_test_message("bar %.1f ns: 4096-bin IRF %.4f, 256-bin IRF %.4f", truth, f, e);
        g_assert_cmpfloat(fabs(f / e - 1.0), <, 1e-3);
        g_assert_cmpfloat(fabs(f / truth - 1.0), <, 0.02);
    }
    /* nothing of an IRF beyond the data's range: a clear error */
    g_autofree char *late = g_build_filename(dir, "late.csv", NULL);
    g_assert_true(g_file_set_contents(late, "t_ns,irf\n40,1\n40.1,2\n40.2,1\n", -1, NULL));
    g_assert_null(fm_flim_load_decay_resampled(late, n_bins, bw, "IRF", NULL, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    g_assert_nonnull(strstr(error->message, "late.csv"));
    g_remove(late);
    g_remove(fine_path);
    g_remove(timed_path);
    g_remove(data_path);
    g_rmdir(dir);
}

/* A 20 ns laser period in a 25.6 ns TAC range, and a last bin cut short: the window ends with the
 * period's last whole bin, or before bins whose counts drop off when no period is known. */
static void test_period_end(void)
{
    fm_flim_sim_params p;
    fm_flim_sim_defaults(&p);
    p.width = 16;
    p.height = 16;
    p.photons = 2000;
    p.irf_sigma_ns = 0.1;
    p.irf_offset_ns = 1.0;
    p.background = 1.0;
    g_autoptr(fm_dataset) ds = simulate(&p);
    const double bw = 0.1;
    fm_dataset_set_meta(ds, "rep_rate_mhz", "50");
    g_assert_cmpfloat(fm_flim_period_ns(ds, 0), ==, 20.0);
    g_assert_cmpfloat(fm_flim_period_ns(ds, 80), ==, 12.5);
    fm_flim_window w;
    g_assert_true(fm_flim_window_choose(ds, FM_FLIM_AUTO, FM_FLIM_AUTO, bw,
                                        fm_flim_period_ns(ds, 0), FM_FLIM_WINDOW_IRF, TRUE, NULL,
                                        &w, NULL));
    g_assert_cmpint(w.shape.period_end, ==, 200);
    g_assert_cmpint(w.end, ==, 200);
    /* no IRF given: a tail from the peak after all */
    g_assert_cmpint(w.kind, ==, FM_FLIM_WINDOW_TAIL);
    g_assert_cmpint(w.start, ==, w.shape.peak);

    /* the last two bins nearly empty, as a PicoHarp's partial last bin of a period */
    const gsize n_px = (gsize)p.width * p.height;
    guint16 *c = ds->data;
    for (gsize i = 0; i < n_px; i++) {
        c[(gsize)255 * n_px + i] = 0;
        c[(gsize)254 * n_px + i] /= 4;
    }
    fm_dataset_changed(ds);
    fm_dataset_set_meta(ds, "rep_rate_mhz", NULL);
    g_assert_true(fm_flim_window_choose(ds, FM_FLIM_AUTO, FM_FLIM_AUTO, bw, 0.0,
                                        FM_FLIM_WINDOW_PERIOD, FALSE, NULL, &w, NULL));
    g_assert_cmpint(w.start, ==, 0);
    g_assert_cmpint(w.end, ==, 254);
    /* given edges are kept, and bad ones rejected with the usual message */
    g_assert_true(fm_flim_window_choose(ds, 2.0, FM_FLIM_AUTO, bw, 0.0, FM_FLIM_WINDOW_TAIL, TRUE,
                                        NULL, &w, NULL));
    g_assert_cmpint(w.start, ==, 20);
    g_assert_false(w.start_auto);
    g_autoptr(GError) error = NULL;
    g_assert_false(fm_flim_window_choose(ds, FM_FLIM_AUTO, 40.0, bw, 0.0, FM_FLIM_WINDOW_TAIL,
                                         FALSE, NULL, &w, &error));
    g_assert_nonnull(strstr(error->message, "lies outside the data"));
}

/* The threshold's rule on known photon counts, what a run reports, and the hint to bin. */
static void test_threshold(void)
{
    /* 1000 pixels of 1..1000 photons and 500 without any: the 99th percentile of the lit ones
     * is 990 (rank round(0.99 x 999) = 989, 0-based), 5 % of it 49.5 -> 49 */
    double photons[1500];
    for (int i = 0; i < 1000; i++)
        photons[i] = 1000 - i;
    for (int i = 1000; i < 1500; i++)
        photons[i] = 0;
    g_assert_cmpfloat(fm_flim_auto_min_photons(photons, 1500), ==, 49.0);
    /* dim image: the floor */
    for (int i = 0; i < 1000; i++)
        photons[i] = 1 + i % 40;
    g_assert_cmpfloat(fm_flim_auto_min_photons(photons, 1500), ==, 10.0);
    g_assert_cmpfloat(fm_flim_auto_min_photons(photons, 0), ==, 10.0);
    /* median 20 of the lit pixels: 2 x 2 gives 80 >= 50 */
    g_assert_cmpint(fm_flim_suggest_binning(photons, 1500, 50), ==, 2);
    g_assert_cmpint(fm_flim_suggest_binning(photons, 1500, 150), ==, 3);

    /* the paper's 2000 photons: about 100, the old fixed default */
    fm_flim_sim_params p;
    fm_flim_sim_defaults(&p);
    p.width = 32;
    p.height = 8;
    p.photons = 2000;
    g_autoptr(fm_dataset) bright = simulate(&p);
    g_autoptr(fm_result) r = run_kv("flim.cmm", bright, NULL);
    g_test_message("2000 photons: %s", r->note);
    const char *at = strstr(r->note, "min_photons ");
    g_assert_nonnull(at);
    double chosen = g_ascii_strtod(at + strlen("min_photons "), NULL);
    g_assert_cmpfloat(chosen, >=, 90);
    g_assert_cmpfloat(chosen, <=, 110);
    g_assert_null(strstr(r->note, "try binning"));

    /* 6 photons per pixel: the floor of 10 leaves most pixels out, the note says so and what to
     * do, and binning 2 fits them */
    p.photons = 6;
    g_autoptr(fm_dataset) dim = simulate(&p);
    g_autoptr(fm_result) d = run_kv("flim.cmm", dim, NULL);
    g_test_message("6 photons: %s", d->note);
    g_assert_nonnull(strstr(d->note, "min_photons 10 (auto)"));
    g_assert_nonnull(strstr(d->note, "most pixels have fewer than 10 photons: try binning 2"));
    const char *const binned[] = {"binning", "2", NULL};
    g_autoptr(fm_result) b = run_kv("flim.cmm", dim, binned);
    const float *mask = fm_result_get_map(b, "mask")->data;
    int fitted = 0;
    for (int i = 0; i < p.width * p.height; i++)
        fitted += mask[i] == 1.0f;
    g_assert_cmpint(2 * fitted, >, p.width * p.height);

    /* "auto" is a value of its own, and a negative number means it too */
    const fm_method *cmm = fm_method_find("flim.cmm");
    g_autoptr(fm_params) params = fm_method_default_params(cmm);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_params_set_from_string(params, "min_photons", "25", &error));
    g_assert_true(fm_params_set_from_string(params, "min_photons", "AUTO", &error));
    g_assert_no_error(error);
    g_assert_cmpfloat(fm_params_get_double(params, "min_photons"), ==, FM_FLIM_AUTO);
    g_assert_false(fm_params_set_from_string(params, "binning", "auto", &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
}

/* The GUI draws a run's window from its method and parameters: the window the run used. */
static void test_run_window(void)
{
    fm_flim_sim_params p;
    fm_flim_sim_defaults(&p);
    p.width = 16;
    p.height = 8;
    p.irf_sigma_ns = 0.1;
    p.irf_offset_ns = 2.0;
    p.background = 0.2;
    g_autoptr(fm_dataset) ds = simulate(&p);
    g_autoptr(fm_result) r = run_kv("flim.lsm", ds, NULL);
    int start = -1, end = -1;
    g_assert_true(fm_flim_run_window(ds, r->method_id, r->params_json, &start, &end));
    g_autofree char *bins = g_strdup_printf("bins %d–%d;", start, end - 1);
    g_test_message("%s: %s", bins, r->note);
    g_assert_nonnull(strstr(r->note, bins));
    g_assert_cmpint(start, >, 15);
    g_assert_false(fm_flim_run_window(ds, "lsi.spatial", "{}", &start, &end));
    g_assert_true(
        fm_flim_run_window(ds, "flim.cmm", "{\"fit_start_ns\":1,\"fit_end_ns\":5}", &start, &end));
    g_assert_cmpint(start, ==, 10);
    g_assert_cmpint(end, ==, 50);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/flim-auto/offset-time-zero", test_offset_time_zero);
    g_test_add_func("/flim-auto/background", test_background);
    g_test_add_func("/flim-auto/irf-resampled", test_irf_resampled);
    g_test_add_func("/flim-auto/period-end", test_period_end);
    g_test_add_func("/flim-auto/threshold", test_threshold);
    g_test_add_func("/flim-auto/run-window", test_run_window);
    return g_test_run();
}
