/* FmMcmlView's widgets: the layers table with its buttons, grid and run controls, the
 * fluence map, plots and totals table, and the file choosers for .mci and .mco. */
#include "mcml-view-private.h"

#include <glib/gi18n.h>

#include "app/core/io/mci.h"
#include "mcml-map.h"
#include "app/gui/panel-util.h"
#include "app/gui/plot-view.h"

static void cell_edited(GtkCellRendererText *cell, const char *path, const char *text,
                        gpointer user)
{
    FmMcmlView *self = user;
    int column = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(cell), "column"));
    char *end = NULL;
    double v = g_ascii_strtod(text, &end);
    GtkTreeIter it;
    if (end == text ||
        !gtk_tree_model_get_iter_from_string(GTK_TREE_MODEL(self->layers), &it, path))
        return;
    gtk_list_store_set(self->layers, &it, column, v, -1);
}

static void format_cell(GtkTreeViewColumn *col, GtkCellRenderer *cell, GtkTreeModel *model,
                        GtkTreeIter *it, gpointer column)
{
    double v;
    gtk_tree_model_get(model, it, GPOINTER_TO_INT(column), &v, -1);
    char buf[32];
    g_snprintf(buf, sizeof buf, "%g", v);
    g_object_set(cell, "text", buf, NULL);
}

/* A column title on two lines ("μa" over "1/cm"), so that five columns fit a narrow panel. */
static GtkWidget *column_title(const char *name, const char *unit)
{
    g_autofree char *text = unit ? g_strdup_printf("%s\n%s", name, unit) : g_strdup(name);
    GtkWidget *label = gtk_label_new(text);
    gtk_label_set_justify(GTK_LABEL(label), GTK_JUSTIFY_CENTER);
    gtk_widget_show(label);
    return label;
}

static GtkWidget *layers_view(FmMcmlView *self)
{
    GtkWidget *tree = gtk_tree_view_new_with_model(GTK_TREE_MODEL(self->layers));
    const char *names[N_COLS] = {_("n"), _("μa"), _("μs"), _("g"), _("d")};
    const char *units[N_COLS] = {NULL, _("1/cm"), _("1/cm"), NULL, _("cm")};
    const char *tips[N_COLS] = {_("Refractive index"), _("Absorption coefficient [1/cm]"),
                                _("Scattering coefficient [1/cm]"), _("Anisotropy"),
                                _("Thickness [cm]")};
    for (int c = 0; c < N_COLS; c++) {
        GtkCellRenderer *cell = gtk_cell_renderer_text_new();
        g_object_set(cell, "editable", TRUE, "xpad", 2, NULL);
        g_object_set_data(G_OBJECT(cell), "column", GINT_TO_POINTER(c));
        g_signal_connect(cell, "edited", G_CALLBACK(cell_edited), self);
        GtkTreeViewColumn *col = gtk_tree_view_column_new();
        gtk_tree_view_column_pack_start(col, cell, TRUE);
        gtk_tree_view_column_set_widget(col, column_title(names[c], units[c]));
        gtk_tree_view_column_set_alignment(col, 0.5);
        gtk_tree_view_column_set_cell_data_func(col, cell, format_cell, GINT_TO_POINTER(c), NULL);
        gtk_tree_view_column_set_expand(col, TRUE);
        gtk_tree_view_append_column(GTK_TREE_VIEW(tree), col);
        gtk_widget_set_tooltip_text(gtk_tree_view_column_get_widget(col), tips[c]);
    }
    return tree;
}

static gboolean selected(FmMcmlView *self, GtkTreeIter *it)
{
    GtkTreeSelection *sel = gtk_tree_view_get_selection(GTK_TREE_VIEW(self->tree));
    return gtk_tree_selection_get_selected(sel, NULL, it);
}

static void add_layer(GtkButton *b, FmMcmlView *self)
{
    gtk_list_store_insert_with_values(self->layers, NULL, -1, COL_N, 1.4, COL_MUA, 1.0, COL_MUS,
                                      100.0, COL_G, 0.9, COL_D, 0.1, -1);
}

static void remove_layer(GtkButton *b, FmMcmlView *self)
{
    GtkTreeIter it;
    if (selected(self, &it))
        gtk_list_store_remove(self->layers, &it);
}

static void move_layer(GtkButton *b, FmMcmlView *self)
{
    GtkTreeIter it, other;
    if (!selected(self, &it))
        return;
    other = it;
    gboolean up = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(b), "up"));
    if (up ? gtk_tree_model_iter_previous(GTK_TREE_MODEL(self->layers), &other)
           : gtk_tree_model_iter_next(GTK_TREE_MODEL(self->layers), &other))
        gtk_list_store_swap(self->layers, &it, &other);
}

static void preset_changed(GtkComboBox *combo, FmMcmlView *self)
{
    const char *id = gtk_combo_box_get_active_id(combo);
    if (id)
        fm_mcml_view_load_preset(self, id);
}

static void run_clicked(GtkButton *b, FmMcmlView *self)
{
    fm_mcml_view_run(self);
}

static void cancel_clicked(GtkButton *b, FmMcmlView *self)
{
    fm_mcml_view_cancel(self);
}

/* One file chooser for the three file buttons; `kind` is "open-mci", "save-mci" or "save-mco". */
static void file_clicked(GtkButton *b, FmMcmlView *self)
{
    const char *kind = g_object_get_data(G_OBJECT(b), "kind");
    gboolean save = g_str_has_prefix(kind, "save");
    GtkFileChooserNative *chooser = gtk_file_chooser_native_new(
        save ? _("Save") : _("Open MCML input"),
        GTK_WINDOW(gtk_widget_get_toplevel(GTK_WIDGET(self->panel))),
        save ? GTK_FILE_CHOOSER_ACTION_SAVE : GTK_FILE_CHOOSER_ACTION_OPEN, NULL, NULL);
    if (save)
        gtk_file_chooser_set_do_overwrite_confirmation(GTK_FILE_CHOOSER(chooser), TRUE);
    if (gtk_native_dialog_run(GTK_NATIVE_DIALOG(chooser)) == GTK_RESPONSE_ACCEPT) {
        g_autofree char *path = gtk_file_chooser_get_filename(GTK_FILE_CHOOSER(chooser));
        g_autoptr(GError) error = NULL;
        gboolean ok = g_str_equal(kind, "open-mci")   ? fm_mcml_view_open_mci(self, path, &error)
                      : g_str_equal(kind, "save-mci") ? fm_mcml_view_save_mci(self, path, &error)
                                                      : fm_mcml_view_save_mco(self, path, &error);
        if (!ok)
            fm_mcml_view_set_status(self, error->message);
    }
    g_object_unref(chooser);
}

static gboolean draw_map(GtkWidget *area, cairo_t *cr, FmMcmlView *self)
{
    fm_mcml_map_draw(area, cr, self->log_fluence, self->last_params.nr, self->last_params.nz,
                     self->last_params.dr_cm, self->last_params.dz_cm, self->bounds,
                     self->last_params.n_layers);
    return GDK_EVENT_STOP;
}

static GtkWidget *button(const char *label, GCallback cb, FmMcmlView *self)
{
    GtkWidget *b = gtk_button_new_with_mnemonic(label);
    g_signal_connect(b, "clicked", cb, self);
    return b;
}

/* A grid of equal columns that shares the panel's width, for rows of buttons or fields. */
static GtkWidget *even_grid(void)
{
    GtkWidget *grid = gtk_grid_new();
    gtk_grid_set_column_homogeneous(GTK_GRID(grid), TRUE);
    gtk_grid_set_row_spacing(GTK_GRID(grid), 4);
    gtk_grid_set_column_spacing(GTK_GRID(grid), 6);
    return grid;
}

/* Combo texts end in "…" when the panel is narrower than them (the preset titles are long). */
static void ellipsize_combo(GtkWidget *combo)
{
    g_autoptr(GList) cells = gtk_cell_layout_get_cells(GTK_CELL_LAYOUT(combo));
    for (GList *c = cells; c; c = c->next)
        if (GTK_IS_CELL_RENDERER_TEXT(c->data))
            g_object_set(c->data, "ellipsize", PANGO_ELLIPSIZE_END, NULL);
}

static void preset_tooltip(GtkComboBox *combo, gpointer unused)
{
    (void)unused;
    const char *id = gtk_combo_box_get_active_id(combo);
    gtk_widget_set_tooltip_text(GTK_WIDGET(combo), id ? _(fm_mci_preset_title(id)) : NULL);
}

static GtkWidget *heading(const char *text)
{
    GtkWidget *label = gtk_label_new(text);
    gtk_widget_set_halign(label, GTK_ALIGN_START);
    gtk_style_context_add_class(gtk_widget_get_style_context(label), "dim-label");
    return label;
}

/* The grid spin buttons, two to a row with the label above each, so that the pair fits a
 * panel of about 260 pixels. */
static GtkWidget *grid_fields(FmMcmlView *self)
{
    static const struct {
        const char *label, *tip;
        double min, max, step;
        int digits, chars;
    } specs[N_SPINS] = {
        {N_("dz [cm]"), N_("Depth step of the grid"), 1e-5, 10, 0.001, 4, 6},
        {N_("dr [cm]"), N_("Radial step of the grid"), 1e-5, 10, 0.001, 4, 6},
        {N_("nz"), N_("Number of depth bins"), 1, 10000, 1, 0, 5},
        {N_("nr"), N_("Number of radial bins"), 1, 10000, 1, 0, 5},
        {N_("na"), N_("Number of exit-angle bins"), 1, 1000, 1, 0, 5},
        {N_("Photons"), N_("Photons launched"), 1, 2e9, 1000, 0, 11},
        {N_("n above"), N_("Refractive index of the medium above"), 1, 5, 0.01, 3, 5},
        {N_("n below"), N_("Refractive index of the medium below"), 1, 5, 0.01, 3, 5},
    };
    /* the photons first and across (its count needs ten digits), then the grid in pairs */
    static const int order[N_SPINS] = {SPIN_PHOTONS, SPIN_DZ, SPIN_DR,      SPIN_NZ,
                                       SPIN_NR,      SPIN_NA, SPIN_N_ABOVE, SPIN_N_BELOW};
    GtkWidget *grid = even_grid();
    for (int k = 0; k < N_SPINS; k++) {
        int i = order[k];
        GtkWidget *label = gtk_label_new(_(specs[i].label));
        gtk_widget_set_halign(label, GTK_ALIGN_START);
        gtk_widget_set_tooltip_text(label, _(specs[i].tip));
        self->spins[i] = gtk_spin_button_new_with_range(specs[i].min, specs[i].max, specs[i].step);
        gtk_spin_button_set_digits(GTK_SPIN_BUTTON(self->spins[i]), specs[i].digits);
        gtk_entry_set_width_chars(GTK_ENTRY(self->spins[i]), specs[i].chars);
        gtk_widget_set_tooltip_text(self->spins[i], _(specs[i].tip));
        gtk_widget_set_hexpand(self->spins[i], TRUE);
        int across = k == 0, col = across ? 0 : (k - 1) % 2,
            row = across ? 0 : 2 + 2 * ((k - 1) / 2);
        gtk_grid_attach(GTK_GRID(grid), label, col, row, across ? 2 : 1, 1);
        gtk_grid_attach(GTK_GRID(grid), self->spins[i], col, row + 1, across ? 2 : 1, 1);
    }
    return grid;
}

static GtkWidget *controls(FmMcmlView *self)
{
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    gtk_container_set_border_width(GTK_CONTAINER(box), 6);
    self->preset = gtk_combo_box_text_new();
    for (const char *const *n = fm_mci_preset_names(); *n; n++)
        gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(self->preset), *n, _(fm_mci_preset_title(*n)));
    ellipsize_combo(self->preset);
    g_signal_connect(self->preset, "changed", G_CALLBACK(preset_changed), self);
    g_signal_connect(self->preset, "changed", G_CALLBACK(preset_tooltip), NULL);
    gtk_box_pack_start(GTK_BOX(box), heading(_("Model")), FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(box), self->preset, FALSE, FALSE, 0);

    /* the table takes its natural height: no scrolled window inside the scrolled panel */
    self->tree = layers_view(self);
    GtkWidget *frame = gtk_frame_new(NULL);
    gtk_container_add(GTK_CONTAINER(frame), self->tree);
    gtk_box_pack_start(GTK_BOX(box), frame, FALSE, FALSE, 0);
    GtkWidget *rows = even_grid();
    gtk_grid_attach(GTK_GRID(rows), button(_("_Add layer"), G_CALLBACK(add_layer), self), 0, 0, 1,
                    1);
    gtk_grid_attach(GTK_GRID(rows), button(_("_Remove"), G_CALLBACK(remove_layer), self), 1, 0, 1,
                    1);
    for (int up = 1; up >= 0; up--) {
        GtkWidget *b = button(up ? _("Move _up") : _("Move _down"), G_CALLBACK(move_layer), self);
        g_object_set_data(G_OBJECT(b), "up", GINT_TO_POINTER(up));
        gtk_grid_attach(GTK_GRID(rows), b, 1 - up, 1, 1, 1);
    }
    gtk_box_pack_start(GTK_BOX(box), rows, FALSE, FALSE, 0);

    gtk_box_pack_start(GTK_BOX(box), heading(_("Grid and photons")), FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(box), grid_fields(self), FALSE, FALSE, 0);
    self->mode = gtk_combo_box_text_new();
    gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(self->mode), "full", _("Full (A[r][z])"));
    gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(self->mode), "rt_only", _("Rd/Tt only"));
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(self->mode), "full");
    gtk_widget_set_tooltip_text(self->mode, _("Full records the absorption A[r][z] and the "
                                              "fluence; Rd/Tt only is faster"));
    self->backend = gtk_combo_box_text_new();
    gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(self->backend), "auto", _("Auto"));
    gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(self->backend), "cpu", _("CPU"));
    gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(self->backend), "cuda", _("CUDA"));
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(self->backend), "auto");
    gtk_widget_set_tooltip_text(self->backend, _("Where the photons run"));
    ellipsize_combo(self->mode);
    ellipsize_combo(self->backend);
    GtkWidget *choices = even_grid();
    gtk_grid_attach(GTK_GRID(choices), self->mode, 0, 0, 1, 1);
    gtk_grid_attach(GTK_GRID(choices), self->backend, 1, 0, 1, 1);
    gtk_box_pack_start(GTK_BOX(box), choices, FALSE, FALSE, 0);

    GtkWidget *run_row = even_grid();
    self->run = button(_("_Run"), G_CALLBACK(run_clicked), self);
    gtk_style_context_add_class(gtk_widget_get_style_context(self->run), "suggested-action");
    self->cancel = button(_("_Cancel"), G_CALLBACK(cancel_clicked), self);
    gtk_widget_set_sensitive(self->cancel, FALSE);
    gtk_grid_attach(GTK_GRID(run_row), self->run, 0, 0, 1, 1);
    gtk_grid_attach(GTK_GRID(run_row), self->cancel, 1, 0, 1, 1);
    self->progress = gtk_progress_bar_new();
    /* Run, Cancel and the progress stay in sight under the long form (the window pins them) */
    GtkWidget *pinned = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    gtk_box_pack_start(GTK_BOX(pinned), run_row, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(pinned), self->progress, FALSE, FALSE, 0);
    fm_panel_pin_to_bottom(pinned);
    gtk_box_pack_start(GTK_BOX(box), pinned, FALSE, FALSE, 0);

    gtk_box_pack_start(GTK_BOX(box), heading(_("Results")), FALSE, FALSE, 0);
    GtkWidget *table = gtk_grid_new();
    gtk_grid_set_column_spacing(GTK_GRID(table), 8);
    const char *names[4] = {N_("Specular Rsp"), N_("Diffuse Rd"), N_("Absorbed A"),
                            N_("Transmitted Tt")};
    const char *tips[4] = {N_("Specular reflectance at the top surface (exact)"),
                           N_("Diffuse reflectance ± its standard error"),
                           N_("Absorbed fraction ± its standard error"),
                           N_("Total transmittance ± its standard error")};
    for (int i = 0; i < 4; i++) {
        GtkWidget *label = gtk_label_new(_(names[i]));
        gtk_widget_set_halign(label, GTK_ALIGN_START);
        gtk_widget_set_tooltip_text(label, _(tips[i]));
        self->totals[i] = gtk_label_new("—");
        gtk_label_set_selectable(GTK_LABEL(self->totals[i]), TRUE);
        gtk_label_set_xalign(GTK_LABEL(self->totals[i]), 0);
        gtk_widget_set_hexpand(self->totals[i], TRUE);
        gtk_grid_attach(GTK_GRID(table), label, 0, i, 1, 1);
        gtk_grid_attach(GTK_GRID(table), self->totals[i], 1, i, 1, 1);
    }
    gtk_box_pack_start(GTK_BOX(box), table, FALSE, FALSE, 0);
    self->status = gtk_label_new("");
    gtk_label_set_line_wrap(GTK_LABEL(self->status), TRUE);
    gtk_label_set_line_wrap_mode(GTK_LABEL(self->status), PANGO_WRAP_WORD_CHAR);
    gtk_label_set_xalign(GTK_LABEL(self->status), 0);
    gtk_label_set_width_chars(GTK_LABEL(self->status), 20);
    gtk_label_set_max_width_chars(GTK_LABEL(self->status), 40);
    gtk_box_pack_start(GTK_BOX(box), self->status, FALSE, FALSE, 0);

    gtk_box_pack_start(GTK_BOX(box), heading(_("Files")), FALSE, FALSE, 0);
    const char *kinds[3][3] = {
        {"open-mci", N_("_Open .mci…"), N_("Read a model from an MCML input file")},
        {"save-mci", N_("Save ._mci…"), N_("Write the model as an MCML input file")},
        {"save-mco", N_("Save .m_co…"), N_("Write the last run in MCML's output format")}};
    GtkWidget *files = even_grid();
    for (int i = 0; i < 3; i++) {
        GtkWidget *b = button(_(kinds[i][1]), G_CALLBACK(file_clicked), self);
        g_object_set_data(G_OBJECT(b), "kind", (gpointer)kinds[i][0]);
        gtk_widget_set_tooltip_text(b, _(kinds[i][2]));
        gtk_grid_attach(GTK_GRID(files), b, i == 0 ? 0 : i - 1, i == 0 ? 0 : 1, i == 0 ? 2 : 1, 1);
    }
    gtk_box_pack_start(GTK_BOX(box), files, FALSE, FALSE, 0);
    return box;
}

static GtkWidget *plot(const char *x, const char *y, gboolean log_y)
{
    GtkWidget *p = fm_plot_view_new();
    fm_plot_view_set_labels(FM_PLOT_VIEW(p), x, y);
    fm_plot_view_set_log_y(FM_PLOT_VIEW(p), log_y);
    gtk_widget_set_size_request(p, 180, 140);
    gtk_widget_set_hexpand(p, TRUE);
    return p;
}

void fm_mcml_view_build(FmMcmlView *self)
{
    self->layers = gtk_list_store_new(N_COLS, G_TYPE_DOUBLE, G_TYPE_DOUBLE, G_TYPE_DOUBLE,
                                      G_TYPE_DOUBLE, G_TYPE_DOUBLE);
    self->panel = g_object_ref_sink(controls(self));
    gtk_widget_show_all(self->panel);

    GtkWidget *right = gtk_grid_new();
    gtk_container_set_border_width(GTK_CONTAINER(right), 8);
    gtk_grid_set_row_spacing(GTK_GRID(right), 6);
    gtk_grid_set_column_spacing(GTK_GRID(right), 6);
    GtkWidget *title = gtk_label_new(_("Fluence Φ(r, z), log scale · white lines: layer "
                                       "boundaries · cyan lines: every decade"));
    gtk_label_set_line_wrap(GTK_LABEL(title), TRUE);
    gtk_label_set_justify(GTK_LABEL(title), GTK_JUSTIFY_CENTER);
    gtk_grid_attach(GTK_GRID(right), title, 0, 0, 3, 1);
    self->area = gtk_drawing_area_new();
    gtk_widget_set_hexpand(self->area, TRUE);
    gtk_widget_set_vexpand(self->area, TRUE);
    gtk_widget_set_size_request(self->area, 320, 200);
    g_signal_connect(self->area, "draw", G_CALLBACK(draw_map), self);
    gtk_grid_attach(GTK_GRID(right), self->area, 0, 1, 3, 1);
    self->rd_plot = plot(_("r [cm]"), _("Rd(r) [1/cm²]"), TRUE);
    self->tt_plot = plot(_("r [cm]"), _("Tt(r) [1/cm²]"), TRUE);
    self->rda_plot = plot(_("exit angle [°]"), _("Rd(α) [1/sr]"), FALSE);
    gtk_grid_attach(GTK_GRID(right), self->rd_plot, 0, 2, 1, 1);
    gtk_grid_attach(GTK_GRID(right), self->tt_plot, 1, 2, 1, 1);
    gtk_grid_attach(GTK_GRID(right), self->rda_plot, 2, 2, 1, 1);
    gtk_box_pack_start(GTK_BOX(self), right, TRUE, TRUE, 0);
    gtk_widget_show_all(right);
}
