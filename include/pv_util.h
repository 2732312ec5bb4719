/*
 * pv_util.h - small shared helpers: cleanup attributes and the error object.
 *
 * The error object follows crun's libcrun_error_t: a function that fails
 * returns a negative value (-errno where one exists) and, when the caller
 * passed a struct pv_error, fills it with one human-readable line that the
 * caller may wrap with more context.  Positive values never mean failure.
 */
#ifndef PYVISOR_INCLUDE_PV_UTIL_H
#define PYVISOR_INCLUDE_PV_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define PV_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* One failure: errno-style code (positive) and a message line. */
struct pv_error {
	int code;
	char msg[1024];
};

/*
 * pv_error_set - record a failure in @err (which may be NULL).
 * @code: positive errno value, or 0 when no errno applies.
 * Returns -code, or -1 when code is 0, so callers can `return pv_error_set(...)`.
 */
int pv_error_set(struct pv_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * pv_error_wrap - prefix the message already in @err with more context
 * ("context: old message").  Keeps err->code.  Returns -err->code (or -1).
 */
int pv_error_wrap(struct pv_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline void pv_freep(void *p)
{
	free(*(void **)p);
}

static inline void pv_closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

static inline void pv_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

#define _cleanup_free_ __attribute__((cleanup(pv_freep)))
#define _cleanup_close_ __attribute__((cleanup(pv_closep)))
#define _cleanup_fclose_ __attribute__((cleanup(pv_fclosep)))

/* Take ownership out of a cleanup variable: returns the fd and sets it to -1. */
static inline int pv_steal_fd(int *fd)
{
	int r = *fd;
	*fd = -1;
	return r;
}

/* Take ownership of a pointer out of a cleanup variable. */
#define pv_steal_ptr(pp)                       \
	({                                     \
		__typeof__(*(pp)) _p = *(pp);  \
		*(pp) = NULL;                  \
		_p;                            \
	})

#endif
