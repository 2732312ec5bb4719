/*
 * info.c - system information answered with the run's limits.
 *
 * sysinfo(2) is what glibc's sysconf(_SC_PHYS_PAGES) and
 * sysconf(_SC_AVPHYS_PAGES) read (os.sysconf in Python, and the memory
 * sizing of numpy, pandas and multiprocessing): the sentry makes the call
 * itself and shows the run's --memory as the total RAM, the room left
 * under it as the free RAM, and no swap.  The call reads no guest memory;
 * it only writes the answer.
 */
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <sys/sysinfo.h>

SYSCALL_HANDLER(sysinfo)
{
	uint64_t total = limits_memory_total(ctx->sentry);
	uint64_t used = limits_memory_used(ctx->sentry);
	struct sysinfo si;
	int r;

	if (sysinfo(&si) < 0)
		return syscall_errno(errno);
	if (total) {
		uint64_t unit = si.mem_unit ? si.mem_unit : 1;
		uint64_t host_free = (uint64_t)si.freeram * unit;
		uint64_t left = used < total ? total - used : 0;

		si.mem_unit = 1;
		if ((uint64_t)si.totalram * unit > total)
			si.totalram = total;
		else
			si.totalram *= unit;
		si.freeram = left < host_free ? left : host_free;
		si.sharedram = 0;
		si.bufferram = 0;
		si.totalswap = 0;
		si.freeswap = 0;
		si.totalhigh = 0;
		si.freehigh = 0;
	}
	r = guestmem_write(ctx, ARG(0), &si, sizeof(si));
	return r < 0 ? syscall_errno(-r) : syscall_value(0);
}
