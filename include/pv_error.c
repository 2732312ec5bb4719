/* pv_error.c - the error object described in pv_util.h. */
#include "pv_util.h"

#include <string.h>

int pv_error_set(struct pv_error *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
		err->code = code;
	}
	return code > 0 ? -code : -1;
}

int pv_error_wrap(struct pv_error *err, const char *fmt, ...)
{
	char prefix[512], old[sizeof(err->msg)];
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	snprintf(err->msg, sizeof(err->msg), "%.400s: %.600s", prefix, old);
	return err->code > 0 ? -err->code : -1;
}
