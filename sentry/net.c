/*
 * net.c - network state of one run (sentry.h, docs/network.md).
 *
 * Pending notifications.  The event loop is single-threaded, so a connect
 * that would block must not run in it.  Every connect the sentry performs
 * is non-blocking.  When the sandbox's socket is non-blocking, the answer
 * is the kernel's (0 or EINPROGRESS) at once.  When it is blocking and the
 * connect is in progress, the notification is not answered: the socket is
 * added to the epoll set (tag SENTRY_TAG_NET, slot) and the answer is sent
 * when it polls writable (0, or SO_ERROR).  The sandbox's thread stays
 * blocked in connect(), as it would natively; a signal or the end of the
 * run ends the wait (SEND then fails with ENOENT, which is fine).
 *
 * Egress connections.  The sentry keeps its own copy of every injected
 * socket to read TCP_INFO (bytes sent and received) and to end the
 * connection (shutdown) when the byte budget is exceeded.  A copy would
 * keep the connection open after the sandbox closes it, so every
 * NET_TICK_MS the sentry checks /proc/PID/fd of the sandbox's processes;
 * when no process holds the socket any more, the final counters are read
 * and the copy is closed (the FIN then leaves at most one tick late).
 */

#include "sentry.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "loader.h"

#define NET_PENDING_MAX 64
#define NET_SLOT_TICK 0xffffffu

enum pend_kind {
	PEND_NONE,
	PEND_LOOP,	/* connect on the sandbox's own socket (private namespace) */
	PEND_EGRESS,	/* host-side connect, inject when done */
};

struct net_pending {
	enum pend_kind kind;
	struct seccomp_notif req;	/* copy, for the answer and audit events */
	pid_t tgid;
	int fd;			/* sentry's socket (owned) */
	int guest_fd;		/* fd number in the sandbox (PEND_EGRESS) */
	bool cloexec;
	int conn;		/* index in conns (PEND_EGRESS) */
};

struct net_conn {
	char dest[64];
	char host[256];
	int fd;			/* sentry's copy while open, else -1 */
	ino_t ino;		/* socket inode */
	struct seccomp_notif req;	/* the connect that made it */
	pid_t tgid;
	uint64_t sent, received;
	const char *status;	/* "connecting", "open", "closed", "failed", "budget" */
	int error;		/* errno of a failed connect */
};

struct net_state {
	bool private_ns;
	ino_t netns_ino;
	int tick_fd;
	bool tick_armed;
	struct net_pending pend[NET_PENDING_MAX];
	struct net_conn *conns;
	size_t nconns, cap;
	unsigned int connects;		/* egress connections attempted */
	bool budget_hit;
};

bool net_private(const struct sentry *s)
{
	return s->net && s->net->private_ns;
}

int net_start(struct sentry *s, pid_t child, struct pv_error *err)
{
	struct net_state *n = calloc(1, sizeof(*n));
	ino_t ours = loader_netns_inode(getpid()), theirs = loader_netns_inode(child);
	struct epoll_event ev = { .events = EPOLLIN,
				  .data.u64 = ((uint64_t)NET_SLOT_TICK << 8) | SENTRY_TAG_NET };

	if (!n)
		return pv_error_set(err, ENOMEM, "out of memory");
	n->private_ns = ours && theirs && ours != theirs;
	n->netns_ino = n->private_ns ? theirs : 0;
	n->tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (n->tick_fd < 0 || epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, n->tick_fd, &ev) < 0) {
		int e = errno;

		if (n->tick_fd >= 0)
			close(n->tick_fd);
		free(n);
		return pv_error_set(err, e, "network accounting timer: %s", strerror(e));
	}
	s->net = n;
	return 0;
}

bool net_sock_in_sandbox(const struct sentry *s, int fd)
{
	struct stat st;
	int nsfd;
	bool in;

	if (!net_private(s))
		return false;
	/* SIOCGSKNS needs CAP_NET_ADMIN over the socket's namespace: the
	 * sentry has it for the sandbox's (it owns the user namespace, or is
	 * root) and, unprivileged, not for the host's: EPERM means "host". */
	nsfd = ioctl(fd, SIOCGSKNS);
	if (nsfd < 0)
		return false;
	in = fstat(nsfd, &st) == 0 && st.st_ino == s->net->netns_ino;
	close(nsfd);
	return in;
}

static void answer(struct sentry *s, uint64_t id, int64_t val, int error)
{
	struct seccomp_notif_resp resp = { .id = id };

	if (error)
		resp.error = -error;
	else
		resp.val = val;
	ioctl(s->notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

/* Audit with a notification copy (the task may be gone by now). */
static void audit_req(struct sentry *s, const struct seccomp_notif *req, pid_t tgid,
		      const char *verdict, int e, const char *rule, const char *address,
		      const char *detail)
{
	struct sentry_proc proc = { .tgid = tgid };
	struct sentry_task task = { .tid = req->pid, .proc = &proc };
	struct syscall_ctx ctx = { .sentry = s, .req = req, .task = &task };

	audit_event_emit(&ctx, verdict, e, rule, NULL, address, detail);
}

static int pending_slot(struct net_state *n)
{
	for (int i = 0; i < NET_PENDING_MAX; i++)
		if (n->pend[i].kind == PEND_NONE)
			return i;
	return -1;
}

/* Keep @ctx's notification pending on @fd becoming writable. */
static struct syscall_ret pend(struct syscall_ctx *ctx, enum pend_kind kind, int fd,
			       int guest_fd, bool cloexec, int conn)
{
	struct sentry *s = ctx->sentry;
	int slot = pending_slot(s->net);
	struct epoll_event ev = { .events = EPOLLOUT };

	if (slot < 0) {
		close(fd);
		return syscall_errno(EAGAIN);
	}
	ev.data.u64 = ((uint64_t)slot << 8) | SENTRY_TAG_NET;
	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int e = errno;

		close(fd);
		return syscall_errno(e);
	}
	s->net->pend[slot] = (struct net_pending){
		.kind = kind, .req = *ctx->req, .tgid = ctx->task->proc->tgid, .fd = fd,
		.guest_fd = guest_fd, .cloexec = cloexec, .conn = conn,
	};
	return (struct syscall_ret){ .inject_fd = -1, .pending = true };
}

/* Run connect(2) on @fd without blocking: O_NONBLOCK is set for the call
 * and restored.  Returns 0 or -errno; *@blocking says whether the file was
 * blocking. */
static int connect_nonblock(int fd, const struct sockaddr *sa, socklen_t len, bool *blocking)
{
	int fl = fcntl(fd, F_GETFL), r, e;

	if (fl < 0)
		return -errno;
	*blocking = !(fl & O_NONBLOCK);
	if (*blocking && fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	r = connect(fd, sa, len);
	e = errno;
	if (*blocking)
		fcntl(fd, F_SETFL, fl);
	return r < 0 ? -e : 0;
}

struct syscall_ret net_loop_connect(struct syscall_ctx *ctx, int fd, const struct sockaddr *sa,
				    socklen_t len)
{
	bool blocking;
	int r = connect_nonblock(fd, sa, len, &blocking);

	if (r == -EINPROGRESS && blocking)
		return pend(ctx, PEND_LOOP, fd, -1, false, -1);
	/* AF_UNIX answers EAGAIN on a full backlog; a blocking socket would
	 * wait.  Answer EAGAIN too (docs/network.md). */
	close(fd);
	return syscall_result(r);
}

/* O_CLOEXEC of the sandbox's fd @fd of task @tid (from fdinfo "flags:"). */
static bool guest_fd_cloexec(pid_t tid, int fd)
{
	char path[64], buf[256], *p;
	_cleanup_close_ int f = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)tid, fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return true;
	n = read(f, buf, sizeof(buf) - 1);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	p = strstr(buf, "flags:");
	if (!p)
		return true;
	return (strtoul(p + 6, NULL, 8) & O_CLOEXEC) != 0;
}

static int inject_setfd(struct sentry *s, uint64_t id, int src, int target, bool cloexec)
{
	struct seccomp_notif_addfd a = {
		.id = id,
		.flags = SECCOMP_ADDFD_FLAG_SETFD,
		.srcfd = (__u32)src,
		.newfd = (__u32)target,
		.newfd_flags = cloexec ? O_CLOEXEC : 0,
	};

	return ioctl(s->notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &a) < 0 ? -errno : 0;
}

static int conn_new(struct net_state *n)
{
	if (n->nconns == n->cap) {
		size_t cap = n->cap ? n->cap * 2 : 8;
		struct net_conn *c = realloc(n->conns, cap * sizeof(*c));

		if (!c)
			return -ENOMEM;
		n->conns = c;
		n->cap = cap;
	}
	memset(&n->conns[n->nconns], 0, sizeof(n->conns[0]));
	n->conns[n->nconns].fd = -1;
	return (int)n->nconns++;
}

static void tick_arm(struct sentry *s, bool on)
{
	struct itimerspec its = { 0 };

	if (on == s->net->tick_armed)
		return;
	if (on) {
		its.it_value.tv_nsec = NET_TICK_MS * 1000000L;
		its.it_interval.tv_nsec = NET_TICK_MS * 1000000L;
	}
	if (timerfd_settime(s->net->tick_fd, 0, &its, NULL) == 0)
		s->net->tick_armed = on;
}

/* The connection @c is established and its socket @fd is to replace the
 * sandbox's fd: inject, keep a copy for accounting.  Returns 0 or -errno. */
static int egress_install(struct sentry *s, uint64_t id, struct net_conn *c, int fd,
			  int guest_fd, bool cloexec, bool nonblock)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL), r;

	if (fl >= 0)
		fcntl(fd, F_SETFL, nonblock ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK));
	r = inject_setfd(s, id, fd, guest_fd, cloexec);
	if (r < 0) {
		close(fd);
		c->status = "failed";
		c->error = -r;
		return r;
	}
	c->fd = fd;
	c->ino = fstat(fd, &st) == 0 ? st.st_ino : 0;
	c->status = "open";
	tick_arm(s, true);
	return 0;
}

/* Socket options carried over from the sandbox's socket to its host-side
 * replacement. */
static const struct {
	int level, name;
} carried[] = {
	{ SOL_SOCKET, SO_RCVTIMEO }, { SOL_SOCKET, SO_SNDTIMEO }, { SOL_SOCKET, SO_KEEPALIVE },
	{ SOL_SOCKET, SO_LINGER },   { SOL_SOCKET, SO_RCVBUF },   { SOL_SOCKET, SO_SNDBUF },
	{ IPPROTO_TCP, TCP_NODELAY }, { IPPROTO_IPV6, IPV6_V6ONLY },
};

struct syscall_ret net_egress_connect(struct syscall_ctx *ctx, int fd, int guest_fd,
				      const struct sockaddr *sa, socklen_t len, const char *dest,
				      const struct net_rule *rule)
{
	struct sentry *s = ctx->sentry;
	struct net_state *n = s->net;
	const struct net_policy *p = s->cfg->net_policy;
	int domain, type, proto, fl, hs, ci, r;
	socklen_t ol = sizeof(int);
	bool nonblock, cloexec, blocking;
	struct net_conn *c;
	char detail[320];

	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &ol) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &ol) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &ol) < 0) {
		close(fd);
		return syscall_errno(ENOTSOCK);
	}
	nonblock = fl & O_NONBLOCK;
	if (p && p->max_conns && n->connects >= p->max_conns) {
		close(fd);
		snprintf(detail, sizeof(detail), "egress connection budget of %u used up",
			 p->max_conns);
		return syscall_deny(ctx, EACCES, "net.budget", NULL, dest, detail);
	}
	if (p && p->max_bytes && n->budget_hit) {
		close(fd);
		return syscall_deny(ctx, EACCES, "net.budget", NULL, dest,
				    "egress byte budget used up");
	}
	hs = socket(domain, type | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
	if (hs < 0) {
		r = errno;
		close(fd);
		return syscall_errno(r);
	}
	for (size_t i = 0; i < PV_ARRAY_SIZE(carried); i++) {
		char v[32];
		socklen_t vl = sizeof(v);

		if (getsockopt(fd, carried[i].level, carried[i].name, v, &vl) == 0)
			setsockopt(hs, carried[i].level, carried[i].name, v, vl);
	}
	close(fd);
	cloexec = guest_fd_cloexec(ctx->req->pid, guest_fd);

	ci = conn_new(n);
	if (ci < 0) {
		close(hs);
		return syscall_errno(ENOMEM);
	}
	n->connects++;
	c = &n->conns[ci];
	snprintf(c->dest, sizeof(c->dest), "%s", dest);
	snprintf(c->host, sizeof(c->host), "%s", rule->host);
	c->req = *ctx->req;
	c->tgid = ctx->task->proc->tgid;
	c->status = "connecting";
	snprintf(detail, sizeof(detail), "egress allowed%s%s", rule->host[0] ? " for " : "",
		 rule->host);
	audit_event_emit(ctx, "allow", 0, "net.allowed", NULL, dest, detail);

	r = connect_nonblock(hs, sa, len, &blocking);
	if (r == -EINPROGRESS && !nonblock)
		return pend(ctx, PEND_EGRESS, hs, guest_fd, cloexec, ci);
	if (r == 0 || r == -EINPROGRESS) {
		int e = egress_install(s, ctx->req->id, c, hs, guest_fd, cloexec, nonblock);

		return e < 0 ? syscall_errno(-e) : syscall_result(r);
	}
	close(hs);
	c->status = "failed";
	c->error = -r;
	return syscall_errno(-r);
}

static void pending_done(struct sentry *s, unsigned int slot)
{
	struct net_pending *pd = &s->net->pend[slot];
	int soerr = 0;
	socklen_t sl = sizeof(soerr);

	epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, pd->fd, NULL);
	if (getsockopt(pd->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
		soerr = errno;
	if (pd->kind == PEND_LOOP) {
		close(pd->fd);
		answer(s, pd->req.id, 0, soerr);
	} else {
		struct net_conn *c = &s->net->conns[pd->conn];

		if (soerr) {
			close(pd->fd);
			c->status = "failed";
			c->error = soerr;
			answer(s, pd->req.id, 0, soerr);
		} else {
			int e = egress_install(s, pd->req.id, c, pd->fd, pd->guest_fd, pd->cloexec,
					       false);

			answer(s, pd->req.id, 0, e < 0 ? -e : 0);
		}
	}
	pd->kind = PEND_NONE;
}

/* Bytes of connection @c from its socket (TCP_INFO). */
static void conn_read_counters(struct net_conn *c)
{
	struct tcp_info ti;
	socklen_t l = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (c->fd >= 0 && getsockopt(c->fd, IPPROTO_TCP, TCP_INFO, &ti, &l) == 0 &&
	    l >= offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(ti.tcpi_bytes_received)) {
		c->sent = ti.tcpi_bytes_acked;
		if (l >= offsetof(struct tcp_info, tcpi_bytes_sent) + sizeof(ti.tcpi_bytes_sent) &&
		    ti.tcpi_bytes_sent > c->sent)
			c->sent = ti.tcpi_bytes_sent;
		c->received = ti.tcpi_bytes_received;
	}
}

/* Does any sandbox process still hold a socket with inode @ino? */
static bool sandbox_holds(struct sentry *s, ino_t ino)
{
	char want[48], path[64], link[64];

	snprintf(want, sizeof(want), "socket:[%lu]", (unsigned long)ino);
	for (struct sentry_proc *p = s->procs; p; p = p->next) {
		DIR *d;
		struct dirent *de;

		snprintf(path, sizeof(path), "/proc/%d/fd", (int)p->tgid);
		d = opendir(path);
		if (!d)
			continue;
		while ((de = readdir(d))) {
			char full[320];
			ssize_t k;

			if (de->d_name[0] == '.')
				continue;
			snprintf(full, sizeof(full), "%s/%s", path, de->d_name);
			k = readlink(full, link, sizeof(link) - 1);
			if (k <= 0)
				continue;
			link[k] = '\0';
			if (!strcmp(link, want)) {
				closedir(d);
				return true;
			}
		}
		closedir(d);
	}
	return false;
}

static void conn_close(struct sentry *s, struct net_conn *c)
{
	char detail[128];

	conn_read_counters(c);
	close(c->fd);
	c->fd = -1;
	if (!strcmp(c->status, "open"))
		c->status = "closed";
	snprintf(detail, sizeof(detail), "connection %s: %llu bytes sent, %llu received",
		 c->status, (unsigned long long)c->sent, (unsigned long long)c->received);
	audit_req(s, &c->req, c->tgid, "allow", 0, "net.allowed", c->dest, detail);
}

void net_tick(struct sentry *s)
{
	struct net_state *n = s->net;
	const struct net_policy *p = s->cfg->net_policy;
	uint64_t total = 0;
	bool open = false;

	for (size_t i = 0; i < n->nconns; i++) {
		struct net_conn *c = &n->conns[i];

		if (c->fd < 0) {
			total += c->sent;
			continue;
		}
		conn_read_counters(c);
		total += c->sent;
		if (!sandbox_holds(s, c->ino))
			conn_close(s, c);
		else
			open = true;
	}
	if (p && p->max_bytes && total > p->max_bytes && !n->budget_hit) {
		char detail[128];

		n->budget_hit = true;
		snprintf(detail, sizeof(detail),
			 "egress byte budget of %llu exceeded (%llu bytes sent): connections ended",
			 (unsigned long long)p->max_bytes, (unsigned long long)total);
		for (size_t i = 0; i < n->nconns; i++) {
			struct net_conn *c = &n->conns[i];

			if (c->fd < 0)
				continue;
			shutdown(c->fd, SHUT_RDWR);
			c->status = "budget";
			audit_req(s, &c->req, c->tgid, "deny", ECONNRESET, "net.budget", c->dest,
				  detail);
		}
	}
	if (!open)
		tick_arm(s, false);
}

bool net_needs_tick(const struct sentry *s)
{
	return s->net && s->net->tick_armed;
}

void net_event(struct sentry *s, unsigned int slot, uint32_t events)
{
	if (!s->net)
		return;
	if (slot == NET_SLOT_TICK) {
		uint64_t ticks;

		if (read(s->net->tick_fd, &ticks, sizeof(ticks)) > 0)
			net_tick(s);
		return;
	}
	if (slot < NET_PENDING_MAX && s->net->pend[slot].kind != PEND_NONE)
		pending_done(s, slot);
}

void net_finish(struct sentry *s)
{
	struct net_state *n = s->net;
	json_t *net, *conns;
	uint64_t sent = 0, received = 0;

	if (!n)
		return;
	for (int i = 0; i < NET_PENDING_MAX; i++) {
		if (n->pend[i].kind == PEND_NONE)
			continue;
		close(n->pend[i].fd);
		if (n->pend[i].kind == PEND_EGRESS)
			n->conns[n->pend[i].conn].status = "failed";
		n->pend[i].kind = PEND_NONE;
	}
	conns = json_array();
	for (size_t i = 0; i < n->nconns; i++) {
		struct net_conn *c = &n->conns[i];
		json_t *o = json_object();

		if (c->fd >= 0)
			conn_close(s, c);
		sent += c->sent;
		received += c->received;
		if (!o)
			continue;
		json_object_set_new(o, "destination", json_string(c->dest));
		json_object_set_new(o, "host", c->host[0] ? json_string(c->host) : json_null());
		json_object_set_new(o, "status", json_string(c->status));
		json_object_set_new(o, "errno", c->error ? json_string(errno_name(c->error))
							: json_null());
		json_object_set_new(o, "bytes_sent", json_integer((json_int_t)c->sent));
		json_object_set_new(o, "bytes_received", json_integer((json_int_t)c->received));
		json_array_append_new(conns, o);
	}
	net = json_object();
	if (net) {
		const struct net_policy *p = s->cfg->net_policy;

		json_object_set_new(net, "loopback",
				    json_string(n->private_ns ? "private" : "refused"));
		json_object_set_new(net, "connections", conns);
		json_object_set_new(net, "bytes_sent", json_integer((json_int_t)sent));
		json_object_set_new(net, "bytes_received", json_integer((json_int_t)received));
		json_object_set_new(net, "max_bytes", p && p->max_bytes ?
				    json_integer((json_int_t)p->max_bytes) : json_null());
		json_object_set_new(net, "max_connections", p && p->max_conns ?
				    json_integer(p->max_conns) : json_null());
		s->outcome->network = net;
	} else {
		json_decref(conns);
	}
	if (n->tick_fd >= 0)
		close(n->tick_fd);
	free(n->conns);
	free(n);
	s->net = NULL;
}
