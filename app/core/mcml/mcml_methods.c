/* Registry entry mcml.run: MCML light transport in layered tissue from an .mci file or preset,
 * with A[r][z], fluence, Rd/Tt arrays as maps and the totals in the note. */
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/mcml/mcml_methods.h"
#include "app/core/methods.h"

static const char *const preset_choices[] = {"mcml_sample", "skin7_600nm", "intralipid10", NULL};
static const char *const mode_choices[] = {"full", "rt_only", NULL};

static const fm_param_spec mcml_params[] = {
    {.key = "mci_file",
     .type = FM_PARAM_STRING,
     .title = N_("Input file"),
     .default_choice = "",
     .help = N_("MCML .mci input file; when empty the preset is used.")},
    {.key = "preset",
     .type = FM_PARAM_ENUM,
     .title = N_("Preset"),
     .default_choice = "mcml_sample",
     .choices = preset_choices,
     .help = N_("Built-in tissue model used when no .mci file is given.")},
    {.key = "run",
     .type = FM_PARAM_INT,
     .title = N_("Run"),
     .default_value = 1,
     .min = 1,
     .max = 10000,
     .help = N_("Which run of a multi-run .mci file to simulate (1 = first).")},
    {.key = "photons",
     .type = FM_PARAM_INT,
     .title = N_("Photons"),
     .default_value = 0,
     .min = 0,
     .max = 9e15, /* doubles hold whole numbers exactly to 2^53 */
     .unit = "photons",
     .help = N_("Photon packets to launch; 0 uses the number in the .mci file.")},
    {.key = "seed",
     .type = FM_PARAM_INT,
     .title = N_("Seed"),
     .default_value = 1,
     .min = 0,
     .max = 2147483647,
     .help = N_("Random seed; the same seed reproduces a CPU run exactly.")},
    {.key = "mode",
     .type = FM_PARAM_ENUM,
     .title = N_("Mode"),
     .default_choice = "full",
     .choices = mode_choices,
     .help = N_("full scores absorption A[r][z]; rt_only scores only reflectance and "
                "transmittance (faster).")},
    {.key = "gpu_cache",
     .type = FM_PARAM_BOOL,
     .title = N_("GPU shared-memory cache"),
     .default_value = 1,
     .help = N_("Cache the high-fluence region of A[r][z] in shared memory (GPU-MCML). On an "
                "H100 the skin model ran 2.4 times faster with it (1e8 photons: 0.30 s against "
                "0.71 s).")},
};

static const fm_output_spec mcml_outputs[] = {
    {.name = "a_rz", .unit = "1/cm^3", .title = N_("Absorption A[r][z]")},
    {.name = "fluence_rz", .unit = "1/cm^2", .title = N_("Fluence A/mua")},
    {.name = "rd_ra", .unit = "1/(cm^2 sr)", .title = N_("Diffuse reflectance Rd[r][a]")},
    {.name = "tt_ra", .unit = "1/(cm^2 sr)", .title = N_("Transmittance Tt[r][a]")},
    {.name = "rd_r", .unit = "1/cm^2", .title = N_("Diffuse reflectance Rd(r)")},
    {.name = "tt_r", .unit = "1/cm^2", .title = N_("Transmittance Tt(r)")},
    {.name = "a_z", .unit = "1/cm", .title = N_("Absorption A(z)")},
    {.name = "a_l", .unit = "1", .title = N_("Absorbed fraction per layer")},
    {.name = "rd_a", .unit = "1/sr", .title = N_("Diffuse reflectance Rd(a)")},
    {.name = "tt_a", .unit = "1/sr", .title = N_("Transmittance Tt(a)")},
    {.name = "rat",
     .unit = "1",
     .title = N_("Totals: Rsp, Rd, A, Tt, SE(Rd), SE(A), SE(Tt), photons")},
};

gboolean fm_mcml_resolve_input(const fm_params *params, const fm_dataset *dataset, fm_mci_run *run,
                               GError **error)
{
    const char *path = fm_params_get_string(params, "mci_file");
    if ((path == NULL || *path == '\0') && dataset)
        path = fm_dataset_get_meta(dataset, "mcml_input");
    g_autoptr(fm_mci_file) file = NULL;
    if (path && *path)
        file = fm_mci_read(path, error);
    else
        file = fm_mci_preset(fm_params_get_choice(params, "preset"), error);
    if (file == NULL)
        return FALSE;
    int index = fm_params_get_int(params, "run") - 1;
    if (index >= file->n_runs) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("run %d: the input has %d run(s)"),
                    index + 1, file->n_runs);
        return FALSE;
    }
    *run = file->runs[index];
    run->output_name = g_strdup(run->output_name);
    fm_mcml_params *p = &run->params;
    gint64 photons = fm_params_get_int64(params, "photons");
    if (photons > 0)
        p->n_photons = photons;
    p->seed = (unsigned long long)fm_params_get_int(params, "seed");
    p->record_absorption = g_strcmp0(fm_params_get_choice(params, "mode"), "rt_only") != 0;
    p->shared_cache = fm_params_get_bool(params, "gpu_cache");
    p->n_devices = 0;
    return TRUE;
}

/* A 1-row map (curves) or an image of doubles converted to float32. */
static fm_map *map_from(const char *name, const char *unit, const double *v, int width, int height)
{
    fm_map *map = fm_map_new(name, unit, width, height, 1);
    for (gsize i = 0; i < (gsize)width * (gsize)height; i++)
        map->data[i] = (float)v[i];
    return map;
}

/* A[r][z] is indexed ir*nz+iz; the image shows r across and depth z down (the paper's Fig. 6),
 * so pixel (x = ir, y = iz). */
static fm_map *image_rz(const char *name, const char *unit, const double *a_rz,
                        const fm_mcml_params *p, const double *scale_z)
{
    fm_map *map = fm_map_new(name, unit, p->nr, p->nz, 1);
    for (int iz = 0; iz < p->nz; iz++)
        for (int ir = 0; ir < p->nr; ir++)
            map->data[(gsize)iz * p->nr + ir] =
                (float)(a_rz[(gsize)ir * p->nz + iz] * (scale_z ? scale_z[iz] : 1.0));
    return map;
}

static fm_map *image_ra(const char *name, const double *v, const fm_mcml_params *p)
{
    fm_map *map = fm_map_new(name, "1/(cm^2 sr)", p->nr, p->na, 1);
    for (int ia = 0; ia < p->na; ia++)
        for (int ir = 0; ir < p->nr; ir++)
            map->data[(gsize)ia * p->nr + ir] = (float)v[(gsize)ir * p->na + ia];
    return map;
}

/* 1/mua of the layer holding each depth bin's centre (NaN where mua = 0: no fluence from A). */
static double *inverse_mua(const fm_mcml_params *p)
{
    double *inv = g_new(double, p->nz);
    for (int iz = 0; iz < p->nz; iz++) {
        double z = (iz + 0.5) * p->dz_cm, top = 0.0;
        int k = 0;
        while (k < p->n_layers - 1 && z >= top + p->layers[k].thickness_cm)
            top += p->layers[k++].thickness_cm;
        double mua = p->layers[k].mua_per_cm;
        inv[iz] = mua > 0 ? 1.0 / mua : NAN;
    }
    return inv;
}

void fm_mcml_result_alloc(fm_mcml_result *r, const fm_mcml_params *p)
{
    const gsize nr = (gsize)p->nr, nz = (gsize)p->nz, na = (gsize)p->na;
    memset(r, 0, sizeof *r);
    r->a_layer = g_new0(double, p->n_layers);
    r->a_z = g_new0(double, nz);
    r->rd_r = g_new0(double, nr);
    r->tt_r = g_new0(double, nr);
    r->rd_a = g_new0(double, na);
    r->tt_a = g_new0(double, na);
    r->rd_ra = g_new0(double, nr *na);
    r->tt_ra = g_new0(double, nr *na);
    if (p->record_absorption)
        r->a_rz = g_new0(double, nr *nz);
}

fm_result *fm_mcml_result_to_maps(const fm_mcml_params *p, const fm_mcml_result *r,
                                  const char *backend, const char *device)
{
    fm_result *result = fm_result_new("mcml.run");
    result->backend = g_strdup(backend);
    result->device = g_strdup(device);
    if (p->record_absorption) {
        g_autofree double *inv = inverse_mua(p);
        fm_result_add_map(result, image_rz("a_rz", "1/cm^3", r->a_rz, p, NULL));
        fm_result_add_map(result, image_rz("fluence_rz", "1/cm^2", r->a_rz, p, inv));
    }
    fm_result_add_map(result, image_ra("rd_ra", r->rd_ra, p));
    fm_result_add_map(result, image_ra("tt_ra", r->tt_ra, p));
    fm_result_add_map(result, map_from("rd_r", "1/cm^2", r->rd_r, p->nr, 1));
    fm_result_add_map(result, map_from("tt_r", "1/cm^2", r->tt_r, p->nr, 1));
    if (p->record_absorption) {
        fm_result_add_map(result, map_from("a_z", "1/cm", r->a_z, p->nz, 1));
        fm_result_add_map(result, map_from("a_l", "1", r->a_layer, p->n_layers, 1));
    }
    fm_result_add_map(result, map_from("rd_a", "1/sr", r->rd_a, p->na, 1));
    fm_result_add_map(result, map_from("tt_a", "1/sr", r->tt_a, p->na, 1));
    const double rat[8] = {r->rsp,   r->rd,   r->a,     r->tt,
                           r->rd_se, r->a_se, r->tt_se, (double)r->photons_done};
    fm_result_add_map(result, map_from("rat", "1", rat, 8, 1));

    GString *note = g_string_new(NULL);
    g_string_append_printf(note,
                           _("Rsp %.6f, Rd %.6f ± %.6f, A %.6f ± %.6f, Tt %.6f ± %.6f; %lld "
                             "photons"),
                           r->rsp, r->rd, r->rd_se, r->a, r->a_se, r->tt, r->tt_se,
                           r->photons_done);
    if (!p->record_absorption)
        g_string_append(note, _("; reflectance/transmittance only (A is the remainder)"));
    result->note = g_string_free(note, FALSE);
    return result;
}

static fm_result *mcml_run(const fm_method *method, fm_dataset *dataset, const fm_params *params,
                           GPtrArray *rois, fm_job_context *context, GError **error)
{
    fm_mci_run run;
    if (!fm_mcml_resolve_input(params, dataset, &run, error))
        return NULL;
    g_autofree char *output_name = run.output_name;
    const fm_mcml_params *p = &run.params;
    char msg[FM_MSG_LEN] = "";
    if (fm_mcml_check(p, msg, sizeof msg) != FM_OK) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, "%s", msg);
        return NULL;
    }
    fm_mcml_result r;
    fm_mcml_result_alloc(&r, p);

    fm_run_info info;
    memset(&info, 0, sizeof info);
    fm_backend backend = context ? context->backend : FM_BACKEND_AUTO;
    fm_status status = fm_mcml_run(p, &r, backend, context ? fm_method_tick : NULL, context, &info,
                                   msg, sizeof msg);
    fm_method_kernel_done(context, &info);
    gboolean partial = status == FM_ERR_CANCELLED && r.photons_done > 0;
    fm_result *result = NULL;
    if (status != FM_OK && !partial) {
        fm_method_set_kernel_error(error, status, msg);
        goto out;
    }

    result = fm_mcml_result_to_maps(p, &r, info.backend_used == FM_BACKEND_CUDA ? "cuda" : "cpu",
                                    info.device_name);
    GString *note = g_string_new(result->note);
    if (partial)
        g_string_append_printf(note, _("; cancelled: partial result from %lld of %lld photons"),
                               r.photons_done, p->n_photons);
    if (info.fell_back)
        g_string_append_printf(note, _("; fell back to the CPU: %s"), info.fallback_reason);
    g_free(result->note);
    result->note = g_string_free(note, FALSE);
out:
    fm_mcml_result_clear(&r);
    return result;
}

/* Reverse of map_from / image_rz / image_ra: NULL array when the map is missing. */
static double *curve(const fm_result *result, const char *name, gsize n)
{
    const fm_map *m = fm_result_get_map(result, name);
    if (m == NULL || fm_map_n_values(m) != n)
        return NULL;
    double *v = g_new(double, n);
    for (gsize i = 0; i < n; i++)
        v[i] = m->data[i];
    return v;
}

static double *grid(const fm_result *result, const char *name, int nr, int n2)
{
    const fm_map *m = fm_result_get_map(result, name);
    if (m == NULL || m->width != nr || m->height != n2)
        return NULL;
    double *v = g_new(double, (gsize)nr *n2);
    for (int j = 0; j < n2; j++)
        for (int ir = 0; ir < nr; ir++)
            v[(gsize)ir * n2 + j] = m->data[(gsize)j * nr + ir];
    return v;
}

gboolean fm_mcml_result_from_maps(const fm_result *result, const fm_mcml_params *p,
                                  fm_mcml_result *out, GError **error)
{
    memset(out, 0, sizeof *out);
    const fm_map *rat = fm_result_get_map(result, "rat");
    if (rat == NULL || fm_map_n_values(rat) != 8) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("the result holds no MCML totals"));
        return FALSE;
    }
    out->rsp = rat->data[0];
    out->rd = rat->data[1];
    out->a = rat->data[2];
    out->tt = rat->data[3];
    out->rd_se = rat->data[4];
    out->a_se = rat->data[5];
    out->tt_se = rat->data[6];
    out->photons_done = llround(rat->data[7]);
    out->a_layer = curve(result, "a_l", (gsize)p->n_layers);
    out->a_z = curve(result, "a_z", (gsize)p->nz);
    out->rd_r = curve(result, "rd_r", (gsize)p->nr);
    out->tt_r = curve(result, "tt_r", (gsize)p->nr);
    out->rd_a = curve(result, "rd_a", (gsize)p->na);
    out->tt_a = curve(result, "tt_a", (gsize)p->na);
    out->a_rz = grid(result, "a_rz", p->nr, p->nz);
    out->rd_ra = grid(result, "rd_ra", p->nr, p->na);
    out->tt_ra = grid(result, "tt_ra", p->nr, p->na);
    return TRUE;
}

void fm_mcml_result_clear(fm_mcml_result *r)
{
    g_clear_pointer(&r->a_layer, g_free);
    g_clear_pointer(&r->a_z, g_free);
    g_clear_pointer(&r->a_rz, g_free);
    g_clear_pointer(&r->rd_r, g_free);
    g_clear_pointer(&r->rd_a, g_free);
    g_clear_pointer(&r->rd_ra, g_free);
    g_clear_pointer(&r->tt_r, g_free);
    g_clear_pointer(&r->tt_a, g_free);
    g_clear_pointer(&r->tt_ra, g_free);
}

const fm_method fm_method_mcml_run = {
    .id = "mcml.run",
    .family = "mcml",
    .title = N_("MCML light transport"),
    .description = N_("Monte Carlo light transport in multi-layered tissue (Wang, Jacques, Zheng "
                      "1995) on the CPU or GPUs (Alerstam et al. 2010): absorption A[r][z], "
                      "fluence, diffuse reflectance and transmittance from an .mci file or a "
                      "preset. Needs no image: the input is the .mci file."),
    .params = mcml_params,
    .n_params = G_N_ELEMENTS(mcml_params),
    .roi_roles = NULL,
    .outputs = mcml_outputs,
    .n_outputs = G_N_ELEMENTS(mcml_outputs),
    .run = mcml_run,
};
