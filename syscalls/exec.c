/*
 * exec.c - execve and execveat: resolved in the view, checked against the
 * exec policy on the file the sentry opened, then carried out race-free by
 * sentry_exec() (sentry/exec.c; design in docs/exec.md).
 *
 * "#!" scripts are interpreted here, as binfmt_script does (the kernel's
 * fs/binfmt_script.c: at most BINPRM_BUF_SIZE = 256 bytes of header, one
 * optional argument, at most 4 levels): the kernel is only ever asked to
 * exec an ELF file the sentry opened, so it never reads an interpreter path
 * from a file the sandbox can change.  Script file name in the new argv is
 * the path the caller gave, as the kernel passes it.
 * Sources: execve(2), execveat(2).
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define EXEC_MAX_STRINGS 65536
#define EXEC_MAX_BYTES (2UL << 20)		/* total argv + envp, as ARG_MAX allows */
#define EXEC_MAX_STRLEN (32UL * 4096)		/* MAX_ARG_STRLEN */
#define EXEC_MAX_DEPTH 4			/* BINPRM_MAX_RECURSION */

/* A NULL-terminated vector of malloc'd strings. */
struct strv {
	char **v;
	size_t n, cap, bytes;
};

static void strv_free(struct strv *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	memset(sv, 0, sizeof(*sv));
}

static int strv_push(struct strv *sv, char *str)
{
	if (!str)
		return -ENOMEM;
	if (sv->n + 2 > sv->cap) {
		size_t cap = sv->cap ? sv->cap * 2 : 16;
		char **v = realloc(sv->v, cap * sizeof(*v));

		if (!v) {
			free(str);
			return -ENOMEM;
		}
		sv->v = v;
		sv->cap = cap;
	}
	sv->bytes += strlen(str) + 1;
	sv->v[sv->n++] = str;
	sv->v[sv->n] = NULL;
	return 0;
}

/* Copy the guest's NULL-terminated string vector at @addr once. */
static int copy_strv(struct syscall_ctx *ctx, uint64_t addr, struct strv *sv, size_t *budget)
{
	char *buf = malloc(EXEC_MAX_STRLEN);
	int r = 0;

	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; addr && r == 0; i++) {
		uint64_t p;

		if (i >= EXEC_MAX_STRINGS) {
			r = -E2BIG;
			break;
		}
		r = guestmem_read(ctx, addr + i * sizeof(p), &p, sizeof(p));
		if (r < 0 || p == 0)
			break;
		r = guestmem_read_str(ctx, p, buf, EXEC_MAX_STRLEN);
		if (r < 0)
			break;
		if ((size_t)r + 1 > *budget) {
			r = -E2BIG;
			break;
		}
		*budget -= (size_t)r + 1;
		r = strv_push(sv, strdup(buf));
	}
	free(buf);
	return r < 0 ? r : 0;
}

/* Parse a "#!" line from @hdr (@len bytes) into @interp and @arg (either
 * may end up empty).  Returns 0, or -ENOEXEC when the line is unusable. */
static int parse_shebang(const char *hdr, size_t len, char *interp, size_t isz, char *arg,
			 size_t asz)
{
	const char *p = hdr + 2, *end = memchr(hdr, '\n', len), *s;

	if (!end)
		end = hdr + len; /* the kernel accepts a truncated line if the
				  * interpreter name is complete (binfmt_script) */
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	s = p;
	while (p < end && *p != ' ' && *p != '\t' && *p != '\0')
		p++;
	if (p == s || (size_t)(p - s) >= isz)
		return -ENOEXEC;
	if (p == hdr + len && !memchr(hdr, '\n', len))
		return -ENOEXEC; /* interpreter name may be cut off */
	memcpy(interp, s, (size_t)(p - s));
	interp[p - s] = '\0';
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	s = p;
	/* The rest of the line, trailing blanks removed, is one argument. */
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\0' || end[-1] == '\r'))
		end--;
	if ((size_t)(end - s) >= asz)
		return -ENOEXEC;
	memcpy(arg, s, (size_t)(end - s));
	arg[end - s] = '\0';
	return 0;
}

static bool exec_allowed(struct syscall_ctx *ctx, const struct stat *st)
{
	const struct sentry_config *cfg = ctx->sentry->cfg;

	for (size_t i = 0; i < cfg->nexec_allow; i++)
		if (cfg->exec_allow[i].dev == st->st_dev && cfg->exec_allow[i].ino == st->st_ino)
			return true;
	return false;
}

static struct syscall_ret do_execveat(struct syscall_ctx *ctx, int dirfd, uint64_t path_addr,
				      uint64_t argv_addr, uint64_t envp_addr, int flags)
{
	struct gofer_lookup_info info = { 0 };
	char path[PATH_MAX], base[PATH_MAX], cur[PATH_MAX];
	struct strv argv = { 0 }, envp = { 0 };
	size_t budget = EXEC_MAX_BYTES;
	struct syscall_ret ret;
	int fd = -1, r;

	if (flags & ~(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW))
		return syscall_errno(EINVAL);
	if (copy_path(ctx, path_addr, path, &ret) < 0)
		return ret;
	if (path[0] == '\0') {
		/* Exec of an fd the sandbox holds (AT_EMPTY_PATH): not offered,
		 * it could be a memfd the sandbox wrote itself. */
		if (!(flags & AT_EMPTY_PATH))
			return syscall_errno(ENOENT);
		return syscall_deny(ctx, EACCES, "exec.refused", NULL, NULL,
				    "exec of an fd is not allowed");
	}
	r = at_base(ctx, dirfd, path, base);
	if (r < 0)
		return syscall_errno(-r);
	r = copy_strv(ctx, argv_addr, &argv, &budget);
	if (r == 0)
		r = copy_strv(ctx, envp_addr, &envp, &budget);
	if (r < 0) {
		strv_free(&argv);
		strv_free(&envp);
		if (r == -EFAULT)
			return syscall_deny(ctx, EFAULT, "guestmem.unreadable", path, NULL,
					    "argv or envp unreadable");
		return syscall_errno(-r);
	}
	if (!argv.v && strv_push(&argv, strdup("")) < 0) {
		strv_free(&envp);
		return syscall_errno(ENOMEM);
	}
	if (!envp.v) {
		envp.v = calloc(1, sizeof(char *));
		if (!envp.v) {
			strv_free(&argv);
			return syscall_errno(ENOMEM);
		}
	}

	snprintf(cur, sizeof(cur), "%s", path);
	for (int depth = 0;; depth++) {
		char hdr[256], interp[PATH_MAX], arg[256];
		struct stat st;
		ssize_t n;

		memset(&info, 0, sizeof(info));
		r = gofer_access(ctx->sentry->view, base, cur, X_OK,
				 depth == 0 ? (flags & AT_SYMLINK_NOFOLLOW) : 0, &info);
		if (r == 0)
			r = fd = gofer_open(ctx->sentry->view, base, cur,
					    O_RDONLY | (depth == 0 && (flags & AT_SYMLINK_NOFOLLOW)
							    ? O_NOFOLLOW : 0),
					    0, &info);
		if (r < 0) {
			ret = view_result(ctx, r, &info, cur);
			goto out;
		}
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			ret = syscall_errno(EACCES);
			goto out;
		}
		n = pread(fd, hdr, sizeof(hdr), 0);
		if (n >= 2 && hdr[0] == '#' && hdr[1] == '!') {
			struct strv nv = { 0 };

			if (depth >= EXEC_MAX_DEPTH) {
				ret = syscall_errno(ELOOP);
				goto out;
			}
			if (parse_shebang(hdr, (size_t)n, interp, sizeof(interp), arg, sizeof(arg))) {
				ret = syscall_errno(ENOEXEC);
				goto out;
			}
			/* argv becomes: interp [arg] script argv[1..] */
			r = strv_push(&nv, strdup(interp));
			if (r == 0 && arg[0])
				r = strv_push(&nv, strdup(arg));
			if (r == 0)
				r = strv_push(&nv, strdup(cur));
			for (size_t i = 1; r == 0 && i < argv.n; i++)
				r = strv_push(&nv, strdup(argv.v[i]));
			if (r < 0) {
				strv_free(&nv);
				ret = syscall_errno(-r);
				goto out;
			}
			strv_free(&argv);
			argv = nv;
			snprintf(cur, sizeof(cur), "%s", interp);
			close(fd);
			fd = -1;
			continue;
		}
		if (n < 4 || memcmp(hdr, "\x7f" "ELF", 4) != 0) {
			ret = syscall_errno(ENOEXEC);
			goto out;
		}
		/* The policy is checked on the ELF file the kernel will run,
		 * by its identity: only programs on the allowlist, which are
		 * host files of read-only binds (never the sandbox's own
		 * files, whose content it controls). */
		if (!exec_allowed(ctx, &st)) {
			char detail[PATH_MAX + 64];

			snprintf(detail, sizeof(detail), "%s is not on the exec allowlist",
				 info.view_path[0] ? info.view_path : cur);
			ret = syscall_deny(ctx, EACCES, "exec.refused",
					   info.view_path[0] ? info.view_path : cur, NULL, detail);
			goto out;
		}
		break;
	}
	ret = sentry_exec(ctx, fd, argv.v, envp.v);
	fd = -1; /* consumed */
out:
	if (fd >= 0)
		close(fd);
	strv_free(&argv);
	strv_free(&envp);
	return ret;
}

SYSCALL_HANDLER(execve)
{
	struct sentry_proc *p = ctx->task->proc;

	if (p->loader_exec && ctx->task->tid == p->tgid) {
		/* The loader's exec: its arguments are the loader's own memory,
		 * written before the filter was installed, and no sandboxed
		 * code has run yet in this process (it is single-threaded and
		 * has executed only loader/spawn.c since fork).  The decision
		 * depends on the sentry's state only. */
		p->loader_exec = false;
		return syscall_continue();
	}
	return do_execveat(ctx, AT_FDCWD, ARG(0), ARG(1), ARG(2), 0);
}

SYSCALL_HANDLER(execveat)
{
	return do_execveat(ctx, ARG_INT(0), ARG(1), ARG(2), ARG(3), ARG_INT(4));
}
