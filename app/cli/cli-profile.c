/* fluxmap-cli run --profile: the stage times and memory figures of one run, as JSON or text. */
#include <glib/gi18n.h>
#include <stdio.h>
#include <sys/resource.h>

#include "app/cli/cli.h"

static double megabytes(double bytes)
{
    return bytes / (1024.0 * 1024.0);
}

void fm_cli_profile_measure(fm_cli_profile *profile, const fm_dataset *dataset,
                            const fm_result *result)
{
    profile->input_mb = dataset ? megabytes((double)fm_dataset_n_bytes(dataset)) : 0.0;
    double outputs = 0.0;
    for (guint i = 0; result && i < result->maps->len; i++)
        outputs += (double)fm_map_n_values(result->maps->pdata[i]) * sizeof(float);
    profile->outputs_mb = megabytes(outputs);
    struct rusage usage;
    /* ru_maxrss is in KiB on Linux */
    profile->peak_rss_mb = getrusage(RUSAGE_SELF, &usage) == 0 ? usage.ru_maxrss / 1024.0 : 0.0;
}

static double other_ms(const fm_cli_profile *profile)
{
    return profile->wall_ms - fm_stage_times_total(&profile->stages);
}

void fm_cli_json_member_profile(JsonBuilder *b, const fm_cli_profile *profile)
{
    json_builder_set_member_name(b, "profile");
    json_builder_begin_object(b);
    fm_cli_json_member_number(b, "wall_ms", profile->wall_ms);
    json_builder_set_member_name(b, "stages");
    json_builder_begin_object(b);
    for (int s = 0; s < FM_N_STAGES; s++)
        fm_cli_json_member_number(b, fm_stage_key(s), profile->stages.ms[s]);
    json_builder_end_object(b);
    fm_cli_json_member_number(b, "other_ms", other_ms(profile));
    fm_cli_json_member_number(b, "device_start_total_ms", profile->device_start_total_ms);
    fm_cli_json_member_number(b, "input_mb", profile->input_mb);
    fm_cli_json_member_number(b, "outputs_mb", profile->outputs_mb);
    fm_cli_json_member_number(b, "peak_rss_mb", profile->peak_rss_mb);
    json_builder_end_object(b);
}

void fm_cli_print_profile(const fm_cli_profile *profile)
{
    printf(_("profile: %.1f ms wall\n"), profile->wall_ms);
    for (int s = 0; s < FM_N_STAGES; s++)
        printf("  %-13s %9.1f ms\n", fm_stage_key(s), profile->stages.ms[s]);
    printf("  %-13s %9.1f ms\n", "other", other_ms(profile));
    if (profile->device_start_total_ms > 0)
        printf(_("  the CUDA start took %.1f ms, beside the read\n"),
               profile->device_start_total_ms);
    printf(_("  memory: input %.1f MB, outputs %.1f MB, peak resident %.1f MB\n"),
           profile->input_mb, profile->outputs_mb, profile->peak_rss_mb);
}
