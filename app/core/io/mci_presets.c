/* Built-in MCML presets: the texts of the data/mcml .mci files (test_mci.c checks they match). */
#include "mci.h"

#include <glib/gi18n.h>
#include <string.h>

#include "app/core/error.h"

static const char skin7_600nm_text[] =
    "##########################################\n"
    "# skin7_600nm.mci\n"
    "#   Seven-layer model of Caucasian skin at 600 nm, the skin model of GPU-MCML\n"
    "#   (Alerstam et al., Biomed. Opt. Express 1(2) 658, 2010): the layers of the GPU-MCML\n"
    "#   package's own input, gpumcml/fast/input/skin/7layerskin_600nm.mci. Its n, mua, mus, g\n"
    "#   are those of Meglinsky & Matcher, \"Modelling the sampling volume for skin blood\n"
    "#   oxygenation measurements\", Med. Biol. Eng. Comput. 39, 44 (2001), Table 2 (there per\n"
    "#   mm); thicknesses 20, 80, 100, 80, 1620, 200, 5900 um (8 mm), air above and below.\n"
    "#   Grid of the GPU-MCML benchmark: dz 20 um, dr 100 um, 500 x 200, 30 angular bins.\n"
    "#   Lengths are in cm, mua and mus are in 1/cm.\n"
    "##########################################\n"
    "\n"
    "1.0                         # file version\n"
    "1                           # number of runs\n"
    "\n"
    "skin7_600nm.mco   A         # output file name, ASCII.\n"
    "1000000                     # No. of photons\n"
    "0.002   0.01                # dz, dr [cm]\n"
    "500     200     30          # No. of dz, dr, da.\n"
    "\n"
    "7                           # Number of layers\n"
    "#n     mua     mus     g       d\n"
    "1                           # n for medium above\n"
    "1.53   0.2     1000    0.9     0.002   # layer 1: stratum corneum\n"
    "1.34   0.15    400     0.85    0.008   # layer 2: living epidermis\n"
    "1.4    0.7     300     0.8     0.01    # layer 3: papillary dermis\n"
    "1.39   1       350     0.9     0.008   # layer 4: upper blood net dermis\n"
    "1.4    0.7     200     0.76    0.162   # layer 5: dermis\n"
    "1.39   1       350     0.95    0.02    # layer 6: deep blood net dermis\n"
    "1.44   0.3     150     0.8     0.59    # layer 7: subcutaneous fat\n"
    "1                           # n for medium below\n";

static const char intralipid10_text[] =
    "##########################################\n"
    "# intralipid10.mci\n"
    "#   10 % Intralipid slab used in the GPU-MCML paper (Alerstam et al., Biomed. Opt.\n"
    "#   Express 1(2) 658, 2010): mua 0.015 /cm, mus 707.7 /cm, g 0.87, n 1.33, 100 cm thick\n"
    "#   (effectively semi-infinite).\n"
    "#   Lengths are in cm, mua and mus are in 1/cm.\n"
    "##########################################\n"
    "\n"
    "1.0                         # file version\n"
    "1                           # number of runs\n"
    "\n"
    "intralipid10.mco  A         # output file name, ASCII.\n"
    "100000                      # No. of photons\n"
    "0.01    0.01                # dz, dr [cm]\n"
    "200     200     30          # No. of dz, dr, da.\n"
    "\n"
    "1                           # Number of layers\n"
    "#n     mua     mus     g       d\n"
    "1                           # n for medium above\n"
    "1.33   0.015   707.7   0.87    100     # layer 1: 10 % Intralipid\n"
    "1                           # n for medium below\n";

static const char mcml_sample_text[] =
    "##########################################\n"
    "# Sample.mci\n"
    "# \tA template for input files for MCML.\n"
    "#\tAny characters following a # are ignored as comments\n"
    "#\tSpace lines are also ignored.\n"
    "#\tLengths are in cm, mua and mus are in 1/cm.\n"
    "#\n"
    "#\tMultiple runs may be stipulated.\n"
    "##########################################\n"
    "\n"
    "1.0                      \t# file version\n"
    "2                        \t# number of runs\n"
    "\n"
    "#### SPECIFY DATA FOR RUN 1\n"
    "#InParm                    \t# Input parameters. cm is used.\n"
    "sample.mco \tA            \t# output file name, ASCII.\n"
    "1000000                  \t# No. of photons\n"
    "0.01\t0.01               \t# dz, dr [cm]\n"
    "40\t50\t1                \t# No. of dz, dr, da.\n"
    "\n"
    "3                        \t# Number of layers\n"
    "#n\tmua\tmus\tg\td         \t# One line for each layer\n"
    "1                         \t# n for medium above\n"
    "1.37\t1\t100\t0.9\t0.1    \t# layer 1\n"
    "1.37\t1\t10\t0.0\t0.1   \t# layer 2\n"
    "1.37\t2\t10\t0.7\t0.2  \t# layer 3\n"
    "1                        \t# n for medium below\n"
    "\n"
    "#### SPECIFY DATA FOR RUN 2\n"
    "#InParm                    \t# Input parameters. cm is used.\n"
    "sample2.mco \tA            \t# output file name, ASCII.\n"
    "1000000                  \t# No. of photons\n"
    "0.01\t0.01               \t# dz, dr [cm]\n"
    "40\t50\t1                \t# No. of dz, dr, da.\n"
    "\n"
    "3                        \t# Number of layers\n"
    "#n\tmua\tmus\tg\td         \t# One line for each layer\n"
    "1                         \t# n for medium above\n"
    "1.37\t1\t10\t0.9\t0.1    \t# layer 1\n"
    "1.37\t1\t10\t0.0\t0.1   \t# layer 2\n"
    "1.37\t2\t100\t0.7\t0.2  \t# layer 3\n"
    "1                        \t# n for medium below\n";

typedef struct {
    const char *name, *title, *text;
} preset;

static const preset presets[] = {
    {"skin7_600nm", N_("Seven-layer skin, 600 nm (Meglinsky & Matcher)"), skin7_600nm_text},
    {"intralipid10", N_("10 % Intralipid slab"), intralipid10_text},
    {"mcml_sample", N_("MCML sample (3 layers)"), mcml_sample_text},
};

static const char *const preset_names[] = {"skin7_600nm", "intralipid10", "mcml_sample", NULL};

static const preset *find(const char *name)
{
    for (gsize i = 0; i < G_N_ELEMENTS(presets); i++)
        if (g_strcmp0(presets[i].name, name) == 0)
            return &presets[i];
    return NULL;
}

const char *const *fm_mci_preset_names(void)
{
    return preset_names;
}

const char *fm_mci_preset_title(const char *name)
{
    const preset *p = find(name);
    return p ? p->title : NULL;
}

const char *fm_mci_preset_text(const char *name)
{
    const preset *p = find(name);
    return p ? p->text : NULL;
}

fm_mci_file *fm_mci_preset(const char *name, GError **error)
{
    const preset *p = find(name);
    if (p == NULL) {
        g_autofree char *known = g_strjoinv(", ", (char **)preset_names);
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("unknown MCML preset '%s' (one of %s)"),
                    name, known);
        return NULL;
    }
    g_autofree char *label = g_strconcat(p->name, ".mci", NULL);
    return fm_mci_parse(p->text, label, error);
}
