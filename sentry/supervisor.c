/*
 * supervisor.c - the sentry's event loop for one run.
 *
 * One epoll set watches: the seccomp listener (notifications), the child's
 * stdout and stderr pipes (read continuously so a flood never blocks the
 * program or the sentry), the loader's status pipe, a signalfd (SIGCHLD,
 * SIGINT, SIGTERM, SIGHUP), a timerfd for the wall-clock limit, and the
 * pidfd of every known sandbox process (exits).
 *
 * Sources: seccomp_unotify(2), epoll(7), signalfd(2), timerfd_create(2),
 * pidfd_open(2) (a pidfd polls readable when the process exits), wait(2).
 */
#include "sentry.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <jansson.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compat.h"
#include "loader.h"

enum {
	TAG_NOTIFY = 1,
	TAG_OUT,
	TAG_ERR,
	TAG_STATUS,
	TAG_SIGNAL,
	TAG_TIMER,
};
_Static_assert(TAG_TIMER < SENTRY_TAG_PROC, "epoll tags overlap");
/* The limits sampler (sentry/limits.c); tags in sentry.h. */
#define TAG_SAMPLE ((uint64_t)SENTRY_TAG_SAMPLE)
#define SAMPLE_FIRST_NS 20000000L	/* first sample 20 ms after the start */
#define SAMPLE_EVERY_NS 100000000L	/* then every 100 ms */

struct loop {
	struct sentry *s;
	struct loader_child child;
	int sfd, tfd, sample_fd;
	enum sentry_status limit_hit;	/* a whole-run limit ended the run, or OK */
	bool limit_after_end;	/* ... found only by the final accounting */
	bool timed_out, interrupted;
	int stop_signal;
	struct pv_error *err;
	int setup_error;
};

static int epoll_add(int epfd, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

void sentry_notif_dispatch(struct sentry *s, const struct seccomp_notif *req)
{
	struct seccomp_notif_resp resp;
	struct syscall_ctx ctx = { .sentry = s, .req = req };
	struct syscall_ret ret;

	ctx.entry = syscall_lookup(req->data.nr);
	ctx.task = sentry_task_get(s, req->pid);
	if (req->data.arch != AUDIT_ARCH_X86_64) {
		/* The filter kills foreign architectures; never reached. */
		ret = syscall_errno(ENOSYS);
	} else if (!ctx.task) {
		/* Not a task of this run, or gone: fail closed. */
		ret = syscall_errno(EPERM);
	} else if (!ctx.entry) {
		ret = syscall_deny(&ctx, ENOSYS, "syscall.unknown", NULL, NULL,
				   "system call not in pyvisor's table");
	} else {
		procfs_enter(&ctx);	/* /proc shows the calling task */
		ret = ctx.entry->handler(&ctx);
		procfs_enter(NULL);
	}
	if (ret.answered)
		return;

	if (ret.pending)
		return; /* answered later (sentry/net.c) */
	memset(&resp, 0, sizeof(resp));
	resp.id = req->id;
	if (ret.inject_fd >= 0) {
		struct seccomp_notif_addfd addfd = {
			.id = req->id,
			.flags = SECCOMP_ADDFD_FLAG_SEND,
			.srcfd = (__u32)ret.inject_fd,
			.newfd_flags = ret.inject_cloexec ? O_CLOEXEC : 0,
		};
		int r = ioctl(s->notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
		int e = errno;

		close(ret.inject_fd);
		if (r >= 0 || e == ENOENT)
			return; /* answered (or the task is gone) */
		/* EMFILE, EBADF...: the call fails with that error, never falls
		 * back to anything else (catalogue SUP-10). */
		resp.error = -e;
	} else if (ret.cont) {
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	} else if (ret.error) {
		resp.error = -ret.error;
	} else {
		resp.val = ret.val;
	}
	ioctl(s->notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

int sentry_notif_hold(struct sentry *s, const struct seccomp_notif *req)
{
	if (s->nheld == s->cap_held) {
		size_t cap = s->cap_held ? s->cap_held * 2 : 16;
		struct seccomp_notif *n = realloc(s->held, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->held = n;
		s->cap_held = cap;
	}
	s->held[s->nheld++] = *req;
	return 0;
}

bool sentry_notif_held(struct sentry *s, pid_t tid)
{
	for (size_t i = 0; i < s->nheld; i++)
		if ((pid_t)s->held[i].pid == tid)
			return true;
	return false;
}

/* Receive one notification and answer it. */
static void handle_notification(struct sentry *s)
{
	struct seccomp_notif req;

	memset(&req, 0, sizeof(req));
	if (ioctl(s->notify_fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		return; /* ENOENT: the task died before we got to it */
	sentry_notif_dispatch(s, &req);
}

/* Answer the notifications held during an exec, oldest first. */
static void dispatch_held(struct sentry *s)
{
	while (s->nheld) {
		struct seccomp_notif req = s->held[0];

		memmove(s->held, s->held + 1, (s->nheld - 1) * sizeof(*s->held));
		s->nheld--;
		sentry_notif_dispatch(s, &req);
	}
}

static void stream_read(struct sentry *s, int fd, struct sentry_stream *st, int out_fd,
			bool *eof)
{
	char buf[65536];
	ssize_t n = read(fd, buf, sizeof(buf));
	size_t cap = s->cfg->max_output, keep;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		*eof = true;
		return;
	}
	st->total += (uint64_t)n;
	keep = st->len < cap ? cap - st->len : 0;
	if (keep > (size_t)n)
		keep = (size_t)n;
	if (keep < (size_t)n)
		st->truncated = true;
	if (keep) {
		memcpy(st->data + st->len, buf, keep);
		if (s->cfg->stream) {
			const char *p = buf;
			size_t left = keep;

			while (left) {
				ssize_t w = write(out_fd, p, left);

				if (w < 0 && errno == EINTR)
					continue;
				if (w <= 0)
					break; /* our own stdout is gone: keep capturing */
				p += w;
				left -= (size_t)w;
			}
		}
		st->len += keep;
	}
}

static void handle_signal(struct loop *l)
{
	struct signalfd_siginfo si;

	while (read(l->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			sentry_ptrace_drain(l->s);
		} else {
			l->interrupted = true;
			l->stop_signal = (int)si.ssi_signo;
		}
	}
}

static int arm_timer(int tfd, double seconds)
{
	struct itimerspec its = { 0 };

	its.it_value.tv_sec = (time_t)seconds;
	its.it_value.tv_nsec = (long)((seconds - (double)its.it_value.tv_sec) * 1e9);
	if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
		its.it_value.tv_nsec = 1;
	return timerfd_settime(tfd, 0, &its, NULL);
}

/* Drain both pipes after every process is gone, with a deadline. */
static void drain(struct loop *l, bool *out_eof, bool *err_eof)
{
	struct sentry *s = l->s;
	uint64_t deadline = sentry_now_ns() + 2000000000ULL;

	while ((!*out_eof || !*err_eof) && sentry_now_ns() < deadline) {
		struct epoll_event evs[8];
		int n = epoll_wait(s->epoll_fd, evs, 8, 100);

		for (int i = 0; i < n; i++) {
			if (evs[i].data.u64 == TAG_OUT && !*out_eof)
				stream_read(s, l->child.out_fd, &s->outcome->out, 1, out_eof);
			else if (evs[i].data.u64 == TAG_ERR && !*err_eof)
				stream_read(s, l->child.err_fd, &s->outcome->err, 2, err_eof);
			else if (evs[i].data.u64 == TAG_NOTIFY)
				handle_notification(s);
			else if (evs[i].data.u64 == TAG_SIGNAL)
				handle_signal(l);
		}
		if (!*out_eof || !*err_eof)
			sentry_kill_all(s);
	}
}

static void finish_outcome(struct loop *l)
{
	struct sentry_outcome *o = l->s->outcome;

	if (!o->duration_ms)
		o->duration_ms = (sentry_now_ns() - l->s->start_ns) / 1000000;
	if (l->limit_hit != SENTRY_STATUS_OK) {
		o->status = l->limit_hit;
		o->signal = l->limit_after_end ? 0 : SIGKILL;
	} else if (l->timed_out) {
		o->status = SENTRY_STATUS_TIMEOUT;
		o->signal = SIGKILL;
	} else if (l->interrupted && !l->s->main_exited) {
		o->status = SENTRY_STATUS_KILLED;
		o->signal = l->stop_signal;
	} else if (WIFEXITED(l->s->main_status)) {
		o->exit_code = WEXITSTATUS(l->s->main_status);
		o->status = o->exit_code ? SENTRY_STATUS_ERROR : SENTRY_STATUS_OK;
	} else if (WIFSIGNALED(l->s->main_status)) {
		o->status = SENTRY_STATUS_KILLED;
		o->signal = WTERMSIG(l->s->main_status);
		/* RLIMIT_CPU: SIGXCPU at the soft limit, SIGKILL at the hard
		 * one (sentry/limits.c). */
		if (l->s->cfg->limits.cpu_ms &&
		    (o->signal == SIGXCPU ||
		     (o->signal == SIGKILL && o->usage.cpu_ms >= l->s->cfg->limits.cpu_ms))) {
			o->status = SENTRY_STATUS_CPU_LIMIT;
			/* The kernel sent SIGXCPU at the limit of its precise
			 * clock; the tick-sampled rusage may read a little less. */
			if (o->usage.cpu_ms < l->s->cfg->limits.cpu_ms)
				o->usage.cpu_ms = l->s->cfg->limits.cpu_ms;
		}
	}
}

static void loop_close(struct loop *l)
{
	struct loader_child *c = &l->child;

	if (c->pidfd >= 0)
		close(c->pidfd);
	if (c->notify_fd >= 0)
		close(c->notify_fd);
	if (c->out_fd >= 0)
		close(c->out_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	if (c->status_fd >= 0)
		close(c->status_fd);
	if (l->sfd >= 0)
		close(l->sfd);
	if (l->tfd >= 0)
		close(l->tfd);
	if (l->sample_fd >= 0)
		close(l->sample_fd);
	if (l->s->epoll_fd >= 0)
		close(l->s->epoll_fd);
	l->s->epoll_fd = -1;
}

int sentry_run(const struct sentry_config *cfg, struct gofer_view *view,
	       const struct loader_filter *filter, struct sentry_outcome *outcome,
	       struct pv_error *err)
{
	struct sentry s = { .cfg = cfg, .view = view, .notify_fd = -1, .epoll_fd = -1 };
	struct loop l = { .s = &s, .sfd = -1, .tfd = -1, .sample_fd = -1, .err = err,
			  .limit_hit = SENTRY_STATUS_OK };
	bool out_eof = false, err_eof = false, status_done = false;
	unsigned char rnd[8];
	sigset_t mask, old;
	int r = 0;

	memset(outcome, 0, sizeof(*outcome));
	outcome->exit_code = -1;
	outcome->out.data = malloc(cfg->max_output ? cfg->max_output : 1);
	outcome->err.data = malloc(cfg->max_output ? cfg->max_output : 1);
	outcome->audit_events = json_array();
	if (!outcome->out.data || !outcome->err.data || !outcome->audit_events)
		return pv_error_set(err, ENOMEM, "out of memory");
	s.outcome = outcome;
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		memset(rnd, 0, sizeof(rnd));
	for (int i = 0; i < 8; i++)
		snprintf(s.run_id + 2 * i, 3, "%02x", rnd[i]);

	/* Orphans of the run are reparented to us, so teardown finds them. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		return pv_error_set(err, errno, "PR_SET_CHILD_SUBREAPER: %s", strerror(errno));

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, &old);
	signal(SIGPIPE, SIG_IGN);

	l.child.pidfd = l.child.notify_fd = l.child.out_fd = l.child.err_fd = -1;
	l.child.status_fd = -1;
	l.sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	l.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	l.sample_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	s.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (l.sfd < 0 || l.tfd < 0 || l.sample_fd < 0 || s.epoll_fd < 0) {
		r = pv_error_set(err, errno, "event loop set-up: %s", strerror(errno));
		goto out;
	}

	s.start_ns = sentry_now_ns();
	r = loader_spawn(cfg, filter, &l.child, err);
	if (r < 0)
		goto out;
	s.child = l.child.pid;
	s.notify_fd = l.child.notify_fd;
	r = net_start(&s, s.child, err);
	if (r < 0)
		goto out;
	if (limits_start(&s) < 0) {
		r = pv_error_set(err, ENOMEM, "out of memory");
		goto out;
	}
	/* Same-CPU wake-ups halve the round trip where the kernel has them
	 * (Linux 6.6); absence is not an error. */
	ioctl(s.notify_fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS,
	      (unsigned long)SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	fcntl(l.child.out_fd, F_SETFL, O_NONBLOCK);
	fcntl(l.child.err_fd, F_SETFL, O_NONBLOCK);

	if (epoll_add(s.epoll_fd, s.notify_fd, TAG_NOTIFY) < 0 ||
	    epoll_add(s.epoll_fd, l.child.out_fd, TAG_OUT) < 0 ||
	    epoll_add(s.epoll_fd, l.child.err_fd, TAG_ERR) < 0 ||
	    epoll_add(s.epoll_fd, l.child.status_fd, TAG_STATUS) < 0 ||
	    epoll_add(s.epoll_fd, l.sfd, TAG_SIGNAL) < 0 ||
	    epoll_add(s.epoll_fd, l.tfd, TAG_TIMER) < 0 || arm_timer(l.tfd, cfg->timeout_s) < 0 ||
	    epoll_add(s.epoll_fd, l.sample_fd, TAG_SAMPLE) < 0 ||
	    timerfd_settime(l.sample_fd, 0,
			    &(struct itimerspec){ .it_value.tv_nsec = SAMPLE_FIRST_NS,
						  .it_interval.tv_nsec = SAMPLE_EVERY_NS },
			    NULL) < 0) {
		r = pv_error_set(err, errno, "event loop set-up: %s", strerror(errno));
		goto out;
	}

	while (!s.main_exited && !l.timed_out && !l.interrupted &&
	       l.limit_hit == SENTRY_STATUS_OK) {
		struct epoll_event evs[16];
		int n = epoll_wait(s.epoll_fd, evs, 16, -1);

		if (n < 0 && errno != EINTR) {
			r = pv_error_set(err, errno, "epoll_wait: %s", strerror(errno));
			goto out;
		}
		dispatch_held(&s);
		for (int i = 0; i < n; i++) {
			switch (evs[i].data.u64) {
			case TAG_NOTIFY:
				if (evs[i].events & (EPOLLHUP | EPOLLERR)) {
					/* Every filtered task is gone. */
					epoll_ctl(s.epoll_fd, EPOLL_CTL_DEL, s.notify_fd, NULL);
				} else {
					handle_notification(&s);
				}
				break;
			case TAG_OUT:
				if (!out_eof)
					stream_read(&s, l.child.out_fd, &outcome->out, 1, &out_eof);
				if (out_eof)
					epoll_ctl(s.epoll_fd, EPOLL_CTL_DEL, l.child.out_fd, NULL);
				break;
			case TAG_ERR:
				if (!err_eof)
					stream_read(&s, l.child.err_fd, &outcome->err, 2, &err_eof);
				if (err_eof)
					epoll_ctl(s.epoll_fd, EPOLL_CTL_DEL, l.child.err_fd, NULL);
				break;
			case TAG_STATUS:
				if (!status_done) {
					status_done = true;
					epoll_ctl(s.epoll_fd, EPOLL_CTL_DEL, l.child.status_fd, NULL);
					r = loader_status_read(l.child.status_fd, err);
					if (r < 0)
						goto out;
					/* The program now runs: a first sample, so that
					 * even a very short run has one. */
					l.limit_hit = limits_sample(&s);
				}
				break;
			case TAG_SIGNAL:
				handle_signal(&l);
				break;
			case TAG_TIMER:
				l.timed_out = true;
				break;
			case TAG_SAMPLE: {
				uint64_t ticks;

				if (read(l.sample_fd, &ticks, sizeof(ticks)) < 0) {
					/* EAGAIN: nothing due */
				}
				l.limit_hit = limits_sample(&s);
				break;
			}
			default: {
				if ((evs[i].data.u64 & 0xff) == SENTRY_TAG_NET) {
					net_event(&s, (unsigned int)(evs[i].data.u64 >> 8),
						  evs[i].events);
					break;
				}
				/* A pidfd: that process has exited.  Looked up by
				 * tgid, since an earlier event of this batch may
				 * have reaped it already. */
				pid_t tgid = (pid_t)(evs[i].data.u64 >> 8);
				struct sentry_proc *p = sentry_proc_find(&s, tgid);

				if (p) {
					epoll_ctl(s.epoll_fd, EPOLL_CTL_DEL, p->pidfd, NULL);
					if (p->tgid != s.child)
						sentry_proc_reap(&s, p);
				}
				break;
			}
			}
		}
	}

	/* The first process is done (or time is up): end the whole run. */
	sentry_kill_all(&s);
	drain(&l, &out_eof, &err_eof);
	net_finish(&s);
	{
		enum sentry_status last = limits_stop(&s);

		if (l.limit_hit == SENTRY_STATUS_OK && last != SENTRY_STATUS_OK) {
			/* Over the limit after the program ended: it was not
			 * killed for it, so no signal is reported. */
			l.limit_hit = last;
			l.limit_after_end = true;
		}
	}
	finish_outcome(&l);

out:
	if (r < 0 && l.child.pid > 0)
		sentry_kill_all(&s);
	net_finish(&s);
	limits_stop(&s);
	sentry_tasks_free(&s);
	free(s.deferred);
	free(s.held);
	loop_close(&l);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return r;
}

void sentry_outcome_free(struct sentry_outcome *o)
{
	free(o->out.data);
	free(o->err.data);
	json_decref(o->audit_events);
	json_decref(o->network);
	memset(o, 0, sizeof(*o));
}
