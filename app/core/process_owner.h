/* Who owns a catalogue run: this process's identity, and whether a recorded one is still alive. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A process as the kernel names it, robust against pid reuse: the pid with its start time (clock
 * ticks after boot, /proc/<pid>/stat field 22), the boot it ran in (/proc/sys/kernel/random/
 * boot_id), its pid namespace (/proc/self/ns/pid, so that a sandbox's pids are not looked up in
 * another's /proc) and the host name. */
typedef struct {
    char *host, *boot_id, *pid_ns;
    gint64 pid;
    guint64 start_ticks;
} fm_process_owner;

void fm_process_owner_clear(fm_process_owner *owner);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(fm_process_owner, fm_process_owner_clear)

/* This process; FALSE (fields NULL / 0) where /proc cannot tell (not Linux). */
gboolean fm_process_owner_self(fm_process_owner *owner);

typedef enum {
    FM_OWNER_ALIVE,   /* the very process is still running */
    FM_OWNER_GONE,    /* it ended (or the machine rebooted since) */
    FM_OWNER_UNKNOWN, /* another host or pid namespace, or nothing recorded: cannot tell */
} fm_owner_state;

/* Whether the process owner describes still runs, seen from this process. */
fm_owner_state fm_process_owner_state(const fm_process_owner *owner);

G_END_DECLS
