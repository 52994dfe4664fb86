/* Minimal TAP output for the plain-C kernel tests (they must build without GLib). */
#pragma once

#include <stdarg.h>
#include <stdio.h>

static int tap_count, tap_failed;

/* Prints "ok N - what" or "not ok N - what"; returns cond so callers can add diagnostics. */
__attribute__((format(printf, 2, 3))) static int tap_ok(int cond, const char *fmt, ...)
{
    va_list ap;
    tap_count++;
    if (!cond)
        tap_failed++;
    printf("%sok %d - ", cond ? "" : "not ", tap_count);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    return cond;
}

/* The plan goes last (allowed by TAP) so that tests need not be counted by hand. */
static int tap_done(void)
{
    printf("1..%d\n", tap_count);
    return tap_failed ? 1 : 0;
}
