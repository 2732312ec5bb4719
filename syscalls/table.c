/*
 * table.c - the syscall table generated from syscalls.def, and the generic
 * handler of rows without one.
 */
#include <errno.h>
#include <stddef.h>

#include "sentry.h"
#include "syscalls.h"

/* Declarations of every handler (repeats of sys_none are harmless). */
#define SYSCALL(name, handler, class, args, note) SYSCALL_HANDLER(handler);
#include "syscalls.def"
#undef SYSCALL

#define SYSCALL(name, handler, class, args, note) \
	{ #name, __NR_##name, sys_##handler, class, args, note },
static const struct syscall_entry table[] = {
#include "syscalls.def"
};
#undef SYSCALL

static const struct syscall_entry *by_nr[PV_SYSCALL_MAX];
static bool by_nr_ready;

static void build_index(void)
{
	for (size_t i = 0; i < PV_ARRAY_SIZE(table); i++) {
		if (table[i].nr >= 0 && table[i].nr < PV_SYSCALL_MAX)
			by_nr[table[i].nr] = &table[i];
	}
	by_nr_ready = true;
}

const struct syscall_entry *syscall_table(size_t *count)
{
	*count = PV_ARRAY_SIZE(table);
	return table;
}

const struct syscall_entry *syscall_lookup(int nr)
{
	if (!by_nr_ready)
		build_index();
	if (nr < 0 || nr >= PV_SYSCALL_MAX)
		return NULL;
	return by_nr[nr];
}

const char *syscall_name(int nr)
{
	const struct syscall_entry *e = syscall_lookup(nr);

	return e ? e->name : NULL;
}

SYSCALL_HANDLER(none)
{
	const struct syscall_entry *e = ctx->entry;

	if (e->class == PV_REFUSE || e->class == PV_ALLOW_IF)
		return syscall_deny(ctx, EPERM, "syscall.refused", NULL, NULL, e->note);
	/* PV_ALLOW and PV_ENOSYS rows are decided in BPF; reaching here means
	 * the filter and the table disagree: fail closed. */
	return syscall_deny(ctx, ENOSYS, "syscall.unknown", NULL, NULL,
			    "filter and table disagree");
}
