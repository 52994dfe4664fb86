/* Process identity from /proc (pid, start time, boot, pid namespace, host) and liveness checks. */
#include "process_owner.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

void fm_process_owner_clear(fm_process_owner *owner)
{
    g_clear_pointer(&owner->host, g_free);
    g_clear_pointer(&owner->boot_id, g_free);
    g_clear_pointer(&owner->pid_ns, g_free);
    owner->pid = 0;
    owner->start_ticks = 0;
}

/* Field 22 (starttime) of /proc/<pid>/stat; FALSE when there is no such process or only its
 * zombie (killed, not yet reaped by its parent) is left. The command
 * name (field 2) is in parentheses and may hold spaces and ')', so fields are counted from the
 * last ')'. */
static gboolean start_ticks_of(gint64 pid, guint64 *ticks)
{
    g_autofree char *path = g_strdup_printf("/proc/%" G_GINT64_FORMAT "/stat", pid);
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
        return FALSE;
    const char *p = strrchr(text, ')');
    if (p == NULL)
        return FALSE;
    p++;
    while (*p == ' ')
        p++;
    if (*p == 'Z' || *p == 'X') /* field 3, the state: zombie or dead */
        return FALSE;
    /* after ')': field 3 (state) is the first; starttime is field 22, the 20th from here */
    for (int field = 3; field < 22; field++) {
        while (*p == ' ')
            p++;
        while (*p != '\0' && *p != ' ')
            p++;
        if (*p == '\0')
            return FALSE;
    }
    char *end = NULL;
    errno = 0;
    guint64 v = g_ascii_strtoull(p, &end, 10);
    if (errno != 0 || end == p)
        return FALSE;
    *ticks = v;
    return TRUE;
}

static char *boot_id(void)
{
    g_autofree char *text = NULL;
    if (!g_file_get_contents("/proc/sys/kernel/random/boot_id", &text, NULL, NULL))
        return NULL;
    return g_strdup(g_strstrip(text));
}

static char *pid_namespace(void)
{
    return g_file_read_link("/proc/self/ns/pid", NULL);
}

gboolean fm_process_owner_self(fm_process_owner *owner)
{
    memset(owner, 0, sizeof *owner);
    gint64 pid = (gint64)getpid();
    guint64 ticks = 0;
    g_autofree char *boot = boot_id();
    if (!start_ticks_of(pid, &ticks) || boot == NULL)
        return FALSE;
    owner->host = g_strdup(g_get_host_name());
    owner->boot_id = g_steal_pointer(&boot);
    owner->pid_ns = pid_namespace();
    owner->pid = pid;
    owner->start_ticks = ticks;
    return TRUE;
}

fm_owner_state fm_process_owner_state(const fm_process_owner *owner)
{
    if (owner->pid <= 0 || owner->host == NULL || owner->boot_id == NULL)
        return FM_OWNER_UNKNOWN;
    if (g_strcmp0(owner->host, g_get_host_name()) != 0)
        return FM_OWNER_UNKNOWN; /* a catalogue on a shared disk: that host's /proc is not ours */
    g_autofree char *boot = boot_id();
    if (boot == NULL)
        return FM_OWNER_UNKNOWN;
    if (strcmp(boot, owner->boot_id) != 0)
        return FM_OWNER_GONE; /* rebooted since: no process of that boot survives */
    g_autofree char *ns = pid_namespace();
    if (g_strcmp0(ns, owner->pid_ns) != 0)
        return FM_OWNER_UNKNOWN; /* another sandbox's pid numbers */
    guint64 ticks = 0;
    if (!start_ticks_of(owner->pid, &ticks))
        return FM_OWNER_GONE;
    /* the pid may have been given to a newer process since */
    return ticks == owner->start_ticks ? FM_OWNER_ALIVE : FM_OWNER_GONE;
}
