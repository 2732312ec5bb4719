/*
 * socket.c - sockets (docs/network.md).
 *
 * With a private network namespace (loader/netns.c) the sandbox's sockets
 * live in it: 127.0.0.1, ::1 and abstract AF_UNIX names are the sandbox's
 * own.  socket() is decided on its registers (family, type, protocol) and,
 * when allowed, CONTINUE'd: the kernel creates it in the caller's
 * namespace.  Every call that carries an address (bind, connect, sendto
 * with an address, TCP Fast Open) is trapped; the sentry copies the
 * sockaddr once, decides on the copy and acts itself, never CONTINUEs:
 *
 *   - private destinations (loopback, the sandbox's abstract AF_UNIX
 *     names, pathname AF_UNIX names, which are placeholder files in the
 *     view standing for private abstract names, the kernel's netlink):
 *     the sentry runs the call on its pidfd_getfd copy
 *     of the sandbox's socket, which lives in the sandbox's namespace;
 *   - allowed egress (--allow-net, --allow-host): the sentry creates and
 *     connects a host-side socket and installs it over the sandbox's fd
 *     (sentry/net.c);
 *   - anything else: ENETUNREACH (egress) or EACCES (family, bind) with an
 *     audit event naming the destination.
 *
 * Without a private namespace the sandbox's sockets would be the host's, so
 * loopback, abstract names, bind, listen and UDP are refused; allowed
 * egress still works (the injected socket is connected and cannot be
 * re-aimed: connect is trapped).
 *
 * Sources: socket(2), ip(7), ipv6(7), unix(7), netlink(7), bind(2),
 * connect(2), listen(2), send(2) (MSG_FASTOPEN), tcp(7).
 */
#include "internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>


#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif

/* Prefix of the private abstract names that stand for pathname AF_UNIX
 * sockets (the path follows, absolute in the view). */
#define UNIX_PATH_PREFIX "pyvisor-path:"

static const char *family_name(int family)
{
	switch (family) {
	case AF_UNSPEC:
		return "AF_UNSPEC";
	case AF_UNIX:
		return "AF_UNIX";
	case AF_INET:
		return "AF_INET";
	case AF_INET6:
		return "AF_INET6";
	case AF_NETLINK:
		return "AF_NETLINK";
	case AF_PACKET:
		return "AF_PACKET";
	case AF_VSOCK:
		return "AF_VSOCK";
	case AF_ALG:
		return "AF_ALG";
	default:
		return "other";
	}
}

/* Why socket(@family, @type, @proto) is refused, or NULL if allowed. */
static const char *socket_refusal(struct syscall_ctx *ctx, int family, int type, int proto)
{
	bool priv = net_private(ctx->sentry);

	switch (family) {
	case AF_UNIX:
		if (type == SOCK_STREAM || type == SOCK_SEQPACKET)
			return NULL;
		return "AF_UNIX datagram sockets are not supported";
	case AF_INET:
	case AF_INET6:
		if (type == SOCK_STREAM && (proto == 0 || proto == IPPROTO_TCP))
			return NULL;
		if (type == SOCK_DGRAM && (proto == 0 || proto == IPPROTO_UDP))
			return priv ? NULL : "UDP needs a private network namespace";
		if (type == SOCK_RAW)
			return "raw sockets are refused";
		if (type == SOCK_DGRAM && (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6))
			return "ICMP (ping) sockets are refused";
		return "protocol refused";
	case AF_NETLINK:
		if (proto == NETLINK_ROUTE && (type == SOCK_RAW || type == SOCK_DGRAM))
			return priv ? NULL : "netlink needs a private network namespace";
		return "netlink protocol refused";
	default:
		return "address family refused";
	}
}

SYSCALL_HANDLER(socket)
{
	int family = ARG_INT(0), type = ARG_INT(1) & 0xf, proto = ARG_INT(2);
	const char *why = socket_refusal(ctx, family, type, proto);
	char detail[160];

	if (!why) {
		/* Decided on the three registers alone; the kernel creates the
		 * socket in the caller's (private) network namespace. */
		return syscall_continue();
	}
	snprintf(detail, sizeof(detail), "socket(%s=%d, type %d, protocol %d): %s",
		 family_name(family), family, type, proto, why);
	return syscall_deny(ctx, EACCES, "net.refused", NULL, NULL, detail);
}

SYSCALL_HANDLER(socketpair)
{
	char detail[96];

	snprintf(detail, sizeof(detail), "socketpair(%s=%d, type %d)", family_name(ARG_INT(0)),
		 ARG_INT(0), ARG_INT(1));
	return syscall_deny(ctx, EACCES, "net.refused", NULL, NULL, detail);
}

/* A sockaddr copied out of guest memory. */
struct addr_copy {
	struct sockaddr_storage ss;
	socklen_t len;
	char text[160];		/* for the audit log */
	/* AF_INET/AF_INET6, normalised (IPv4-mapped IPv6 -> AF_INET) */
	int family;
	unsigned char ip[16];
	uint16_t port;		/* host order */
};

static void describe(struct addr_copy *a)
{
	const struct sockaddr_storage *ss = &a->ss;
	char ip[INET6_ADDRSTRLEN];

	switch (ss->ss_family) {
	case AF_INET: {
		const struct sockaddr_in *in = (const void *)ss;

		inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
		snprintf(a->text, sizeof(a->text), "%s:%u", ip, ntohs(in->sin_port));
		break;
	}
	case AF_INET6: {
		const struct sockaddr_in6 *in6 = (const void *)ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
		snprintf(a->text, sizeof(a->text), "[%s]:%u", ip, ntohs(in6->sin6_port));
		break;
	}
	case AF_UNIX: {
		const struct sockaddr_un *un = (const void *)ss;
		size_t n = a->len - offsetof(struct sockaddr_un, sun_path);

		if (a->len <= offsetof(struct sockaddr_un, sun_path))
			snprintf(a->text, sizeof(a->text), "unix:(unnamed)");
		else if (un->sun_path[0] == '\0')
			snprintf(a->text, sizeof(a->text), "unix:@%.*s", (int)(n - 1),
				 un->sun_path + 1);
		else
			snprintf(a->text, sizeof(a->text), "unix:%.*s",
				 (int)strnlen(un->sun_path, n), un->sun_path);
		break;
	}
	case AF_NETLINK: {
		const struct sockaddr_nl *nl = (const void *)ss;

		snprintf(a->text, sizeof(a->text), "netlink:%u", nl->nl_pid);
		break;
	}
	default:
		snprintf(a->text, sizeof(a->text), "family %d", ss->ss_family);
		break;
	}
}

/*
 * Copy the sockaddr at @addr (@len bytes).  Returns 0, or fills *@ret
 * (EINVAL for a bad length, EFAULT with an audit event, ESRCH) and returns
 * < 0.  IPv4-mapped IPv6 addresses are normalised into family/ip.
 */
static int copy_addr(struct syscall_ctx *ctx, uint64_t addr, uint64_t len, struct addr_copy *a,
		     struct syscall_ret *ret)
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	int r;

	memset(a, 0, sizeof(*a));
	if (len < sizeof(sa_family_t) || len > sizeof(a->ss)) {
		*ret = syscall_errno(EINVAL);
		return -1;
	}
	r = guestmem_read(ctx, addr, &a->ss, len);
	if (r < 0) {
		*ret = r == -EFAULT ? syscall_deny(ctx, EFAULT, "guestmem.unreadable", NULL, NULL,
						   "sockaddr unreadable")
				    : syscall_errno(-r);
		return -1;
	}
	a->len = (socklen_t)len;
	describe(a);
	if (a->ss.ss_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)&a->ss;

		a->family = AF_INET;
		memcpy(a->ip, &in->sin_addr, 4);
		a->port = ntohs(in->sin_port);
	} else if (a->ss.ss_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const void *)&a->ss;

		a->port = ntohs(in6->sin6_port);
		if (!memcmp(in6->sin6_addr.s6_addr, mapped, 12)) {
			a->family = AF_INET;
			memcpy(a->ip, in6->sin6_addr.s6_addr + 12, 4);
		} else {
			a->family = AF_INET6;
			memcpy(a->ip, in6->sin6_addr.s6_addr, 16);
		}
	}
	return 0;
}

/* Loopback or unspecified ("this host"): stays inside a private
 * namespace. */
static bool addr_is_local(const struct addr_copy *a)
{
	static const unsigned char any6[16], lo6[16] = { [15] = 1 };

	if (a->family == AF_INET)
		return a->ip[0] == 127 || !memcmp(a->ip, any6, 4);
	if (a->family == AF_INET6)
		return !memcmp(a->ip, lo6, 16) || !memcmp(a->ip, any6, 16);
	return false;
}

static bool unix_is_path(const struct addr_copy *a)
{
	const struct sockaddr_un *un = (const void *)&a->ss;

	return a->ss.ss_family == AF_UNIX && a->len > offsetof(struct sockaddr_un, sun_path) &&
	       un->sun_path[0] != '\0';
}

/*
 * Pathname AF_UNIX sockets live in the view: bind (@create) makes an empty
 * placeholder file at the path (EADDRINUSE when the name exists, as the
 * kernel answers), connect requires it (ENOENT otherwise: /run/dbus,
 * docker.sock, ssh-agent sockets do not exist).  The kernel socket is
 * bound to the private abstract name "\0pyvisor-path:" + the canonical
 * view path, in the sandbox's own network namespace.  Rewrites @a; abstract
 * and unnamed addresses are left alone.  Returns 0, or fills *@ret and
 * returns < 0.
 */
static int unix_map_path(struct syscall_ctx *ctx, struct addr_copy *a, bool create,
			 struct syscall_ret *ret)
{
	struct sockaddr_un *un = (void *)&a->ss;
	size_t off = offsetof(struct sockaddr_un, sun_path), n;
	char path[sizeof(un->sun_path) + 1], base[PATH_MAX];
	struct gofer_lookup_info info;
	struct stat st;
	int k, r;

	if (!unix_is_path(a))
		return 0;
	n = strnlen(un->sun_path, a->len - off);
	memcpy(path, un->sun_path, n);
	path[n] = '\0';
	r = at_base(ctx, AT_FDCWD, path, base);
	if (r < 0) {
		*ret = syscall_errno(-r);
		return -1;
	}
	memset(&info, 0, sizeof(info));
	if (create) {
		mode_t mode = 0777 & ~ctx->task->proc->umask;

		r = gofer_open(ctx->sentry->view, base, path,
			       O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, mode, &info);
		if (r >= 0)
			close(r);
		else if (r == -EEXIST)
			r = -EADDRINUSE;
	} else {
		r = gofer_stat(ctx->sentry->view, base, path, false, &st, &info);
	}
	if (r < 0) {
		*ret = view_result(ctx, r, &info, path);
		return -1;
	}
	k = snprintf(un->sun_path + 1, sizeof(un->sun_path) - 1, "%s%s", UNIX_PATH_PREFIX,
		     info.view_path);
	if (k < 0 || (size_t)k >= sizeof(un->sun_path) - 1) {
		if (create)
			gofer_unlink(ctx->sentry->view, base, path, false, &info);
		*ret = syscall_errno(ENAMETOOLONG);
		return -1;
	}
	un->sun_path[0] = '\0';
	a->len = (socklen_t)(off + 1 + (size_t)k);
	return 0;
}

/* Undo the placeholder of a failed pathname bind. */
static void unix_unmap_path(struct syscall_ctx *ctx, const char *view_path)
{
	struct gofer_lookup_info info;

	memset(&info, 0, sizeof(info));
	gofer_unlink(ctx->sentry->view, "/", view_path, false, &info);
}

/* The sentry's copy of the sandbox's socket fd @fd; fills *@domain and
 * *@type.  Returns the fd, or -errno (EBADF, ENOTSOCK). */
static int socket_copy(struct syscall_ctx *ctx, int fd, int *domain, int *type)
{
	socklen_t l = sizeof(int);
	int s = sentry_task_getfd(ctx, fd);

	if (s < 0)
		return s;
	if (getsockopt(s, SOL_SOCKET, SO_DOMAIN, domain, &l) < 0 ||
	    getsockopt(s, SOL_SOCKET, SO_TYPE, type, &l) < 0) {
		close(s);
		return -ENOTSOCK;
	}
	return s;
}

static struct syscall_ret refuse(struct syscall_ctx *ctx, int err, const struct addr_copy *a,
				 const char *what)
{
	return syscall_deny(ctx, err, "net.refused", NULL, a->text, what);
}

SYSCALL_HANDLER(bind)
{
	struct addr_copy a;
	struct syscall_ret ret;
	int domain, type, s, r;
	bool path;

	if (copy_addr(ctx, ARG(1), ARG_UINT(2), &a, &ret) < 0)
		return ret;
	s = socket_copy(ctx, ARG_INT(0), &domain, &type);
	if (s < 0)
		return syscall_errno(-s);
	if (!net_sock_in_sandbox(ctx->sentry, s)) {
		close(s);
		if (net_private(ctx->sentry))
			return syscall_errno(EINVAL); /* a connected egress socket */
		return refuse(ctx, EACCES, &a, "bind: no private network namespace");
	}
	path = domain == AF_UNIX && unix_is_path(&a);
	if (path && unix_map_path(ctx, &a, true, &ret) < 0) {
		close(s);
		return ret;
	}
	/* In the sandbox's own namespace: any address it can bind there is
	 * its own (only lo exists). */
	r = bind(s, (const struct sockaddr *)&a.ss, a.len);
	r = r < 0 ? -errno : 0;
	close(s);
	if (r < 0 && path)
		unix_unmap_path(ctx, ((struct sockaddr_un *)&a.ss)->sun_path + 1 +
				     strlen(UNIX_PATH_PREFIX));
	return syscall_result(r);
}

/*
 * Does a TCP socket listen on @port in the namespace of process @tgid?
 * Reads /proc/TGID/net/tcp and tcp6 (the namespace of that process).
 * On a read error, true: the connect then decides.
 */
static bool tcp_listener_exists(pid_t tgid, uint16_t port)
{
	static const char *const files[] = { "tcp", "tcp6" };
	char path[64], line[512];

	for (size_t i = 0; i < PV_ARRAY_SIZE(files); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)tgid, files[i]);
		f = fopen(path, "re");
		if (!f)
			return true;
		while (fgets(line, sizeof(line), f)) {
			char local[64];
			unsigned int st, p;
			char *colon;

			if (sscanf(line, " %*u: %63s %*s %x", local, &st) != 2 || st != 0x0a)
				continue;
			colon = strrchr(local, ':');
			if (colon && sscanf(colon + 1, "%x", &p) == 1 && p == port) {
				fclose(f);
				return true;
			}
		}
		fclose(f);
	}
	return false;
}

/* The transport protocol of a socket of @type, for the allowlist. */
static int type_proto(int type)
{
	return type == SOCK_STREAM ? IPPROTO_TCP : IPPROTO_UDP;
}

SYSCALL_HANDLER(connect)
{
	struct addr_copy a;
	struct syscall_ret ret;
	const struct net_rule *rule;
	bool in;
	int domain, type, s;

	if (copy_addr(ctx, ARG(1), ARG_UINT(2), &a, &ret) < 0)
		return ret;
	s = socket_copy(ctx, ARG_INT(0), &domain, &type);
	if (s < 0)
		return syscall_errno(-s);
	in = net_sock_in_sandbox(ctx->sentry, s);

	if (a.ss.ss_family == AF_UNSPEC) {
		/* Dissolving an association.  Never on a host-side socket: it
		 * could then listen on the host. */
		if (!in) {
			close(s);
			return refuse(ctx, EACCES, &a, "connect(AF_UNSPEC) on a host-side socket");
		}
		return net_loop_connect(ctx, s, (const struct sockaddr *)&a.ss, a.len);
	}

	if ((domain == AF_INET || domain == AF_INET6) && a.family) {
		rule = net_policy_match(ctx->sentry->cfg->net_policy, a.family, a.ip, a.port,
					type_proto(type));
		if (rule && type == SOCK_STREAM)
			return net_egress_connect(ctx, s, ARG_INT(0),
						  (const struct sockaddr *)&a.ss, a.len, a.text,
						  rule);
		if (addr_is_local(&a) && in) {
			/* Fail fast, with an audit event, when nothing inside
			 * listens (even for a non-blocking socket, which
			 * would otherwise learn it later from SO_ERROR). */
			if (type == SOCK_STREAM &&
			    !tcp_listener_exists(ctx->task->proc->tgid, a.port)) {
				close(s);
				return refuse(ctx, ECONNREFUSED, &a,
					      "nothing listens there inside the sandbox; "
					      "the host's loopback is not reachable");
			}
			return net_loop_connect(ctx, s, (const struct sockaddr *)&a.ss, a.len);
		}
		close(s);
		if (addr_is_local(&a))
			return refuse(ctx, ECONNREFUSED, &a,
				      net_private(ctx->sentry)
				      ? "loopback connect on a host-side socket"
				      : "loopback is refused without a private network namespace");
		return refuse(ctx, ENETUNREACH, &a, "egress to this destination is not allowed");
	}

	if (domain == AF_UNIX && a.ss.ss_family == AF_UNIX) {
		if (!in) {
			close(s);
			return refuse(ctx, unix_is_path(&a) ? ENOENT : ECONNREFUSED, &a,
				      "AF_UNIX names need a private network namespace");
		}
		if (unix_map_path(ctx, &a, false, &ret) < 0) {
			close(s);
			return ret;
		}
		return net_loop_connect(ctx, s, (const struct sockaddr *)&a.ss, a.len);
	}

	if (domain == AF_NETLINK && a.ss.ss_family == AF_NETLINK && in)
		return net_loop_connect(ctx, s, (const struct sockaddr *)&a.ss, a.len);

	close(s);
	if (a.ss.ss_family != domain)
		return syscall_errno(domain == AF_UNIX ? EINVAL : EAFNOSUPPORT);
	if (domain == AF_INET || domain == AF_INET6)
		return syscall_errno(EINVAL); /* shorter than a sockaddr_in(6) */
	return refuse(ctx, EACCES, &a, "connect refused");
}

SYSCALL_HANDLER(listen)
{
	/* Decided on the mode alone: in a private namespace every socket
	 * that can listen is the sandbox's own (host-side sockets are
	 * connected, and connect(AF_UNSPEC) on them is refused), so listen
	 * cannot touch the host.  Without one, an unbound TCP socket would
	 * be auto-bound on a host port. */
	if (net_private(ctx->sentry))
		return syscall_continue();
	return syscall_deny(ctx, EACCES, "net.refused", NULL, NULL,
			    "listen: no private network namespace");
}

/* Largest payload the sentry sends on the sandbox's behalf in one call
 * (a UDP datagram's maximum); stream sockets may send less, as send(2)
 * allows. */
#define SEND_MAX 65536

/* sendto(fd, buf, len, flags, addr, addrlen) with an address, or with
 * MSG_FASTOPEN: decided on the copied address; performed by the sentry on
 * its copy of the sandbox's socket when the destination is private. */
SYSCALL_HANDLER(sendto)
{
	static char buf[SEND_MAX];
	int flags = ARG_INT(3), domain, type, s;
	size_t len = ARG(2) < SEND_MAX ? (size_t)ARG(2) : SEND_MAX;
	struct addr_copy a;
	struct syscall_ret ret;
	ssize_t n;
	int r;

	if (ARG(4) == 0) {
		/* MSG_FASTOPEN without an address: nothing to connect to. */
		return syscall_errno(EOPNOTSUPP);
	}
	if (copy_addr(ctx, ARG(4), ARG_UINT(5), &a, &ret) < 0)
		return ret;
	s = socket_copy(ctx, ARG_INT(0), &domain, &type);
	if (s < 0)
		return syscall_errno(-s);
	if (!net_sock_in_sandbox(ctx->sentry, s)) {
		close(s);
		return refuse(ctx, a.family && !addr_is_local(&a) ? ENETUNREACH : EACCES, &a,
			      "sendto with an address: not on a host-side socket");
	}
	if (flags & MSG_FASTOPEN) {
		close(s);
		if (a.family && !addr_is_local(&a))
			return refuse(ctx, ENETUNREACH, &a,
				      "TCP Fast Open to this destination is not allowed");
		/* TFO inside the sandbox: unsupported, as when the kernel's
		 * tcp_fastopen sysctl is off; programs fall back to connect. */
		return syscall_errno(EOPNOTSUPP);
	}
	if ((domain == AF_INET || domain == AF_INET6) && a.family && !addr_is_local(&a)) {
		close(s);
		return refuse(ctx, ENETUNREACH, &a, "egress to this destination is not allowed");
	}
	if (domain == AF_UNIX && unix_map_path(ctx, &a, false, &ret) < 0) {
		close(s);
		return ret;
	}
	r = len ? guestmem_read(ctx, ARG(1), buf, len) : 0;
	if (r < 0) {
		close(s);
		return syscall_errno(-r);
	}
	/* Never block the event loop: a full buffer answers EAGAIN. */
	n = sendto(s, buf, len, flags | MSG_DONTWAIT | MSG_NOSIGNAL,
		   (const struct sockaddr *)&a.ss, a.len);
	r = n < 0 ? -errno : 0;
	close(s);
	if (r == -EPIPE && !(flags & MSG_NOSIGNAL)) {
		/* send(2): EPIPE also raises SIGPIPE in the sender. */
		pid_t tid = ctx->req->pid;

		syscall(SYS_tgkill, ctx->task->proc->tgid, tid, SIGPIPE);
	}
	return r < 0 ? syscall_errno(-r) : syscall_value(n);
}

/*
 * sendmsg/sendmmsg.  msg_name is in guest memory, so it is read only to
 * deny: a message naming an IPv4/IPv6 destination outside the sandbox is
 * refused with ENETUNREACH and an audit event (as connect and sendto are),
 * and Fast Open is refused.  Every other call is CONTINUE'd, and that
 * decision does not rest on the memory just read: whatever msg_name holds
 * when the kernel reads it, no socket that can exist in the sandbox sends
 * anywhere non-private through it (UDP sockets exist only in the private
 * namespace, AF_UNIX datagram sockets are refused, AF_UNIX stream and
 * seqpacket sockets reject or ignore msg_name, connected TCP ignores it;
 * see syscalls.def).  A sandbox that changes msg_name after the check gets
 * the kernel's own ENETUNREACH, without an audit event.
 */
static struct syscall_ret check_msg(struct syscall_ctx *ctx, uint64_t msghdr, int flags)
{
	struct msghdr mh;
	struct addr_copy a;
	struct syscall_ret ret;
	int r = guestmem_read(ctx, msghdr, &mh, sizeof(mh));

	if (r < 0)
		return r == -EFAULT ? syscall_errno(EFAULT) : syscall_errno(-r);
	if (!mh.msg_name || mh.msg_namelen == 0) {
		if (flags & MSG_FASTOPEN)
			return syscall_errno(EOPNOTSUPP);
		return syscall_continue();
	}
	if (copy_addr(ctx, (uint64_t)(uintptr_t)mh.msg_name, mh.msg_namelen, &a, &ret) < 0)
		return ret;
	if (a.family && !addr_is_local(&a))
		return refuse(ctx, ENETUNREACH, &a,
			      flags & MSG_FASTOPEN ? "TCP Fast Open to this destination is not allowed"
						   : "egress to this destination is not allowed");
	if (flags & MSG_FASTOPEN)
		return syscall_errno(EOPNOTSUPP);
	return syscall_continue();
}

SYSCALL_HANDLER(sendmsg)
{
	return check_msg(ctx, ARG(1), ARG_INT(2));
}

/* Messages of one sendmmsg checked for a destination (the kernel sends at
 * most UIO_MAXIOV; the rest are covered by the structural argument). */
#define SENDMMSG_CHECKED 64

SYSCALL_HANDLER(sendmmsg)
{
	unsigned int vlen = ARG_UINT(2);
	struct syscall_ret ret = syscall_continue();

	if (vlen > SENDMMSG_CHECKED)
		vlen = SENDMMSG_CHECKED;
	for (unsigned int i = 0; i < vlen; i++) {
		ret = check_msg(ctx, ARG(1) + (uint64_t)i * sizeof(struct mmsghdr), ARG_INT(3));
		if (!ret.cont)
			return ret;
	}
	return ret;
}

/*
 * setsockopt at levels other than SOL_SOCKET, TCP and UDP (those pass in
 * BPF).  IPv4 options (loose/strict source routing) and IPv6 routing
 * headers, hop-by-hop and destination options and next hops would make
 * the packets of an allowed connection travel via another address first:
 * refused.  Everything else is decided on the two registers (level and
 * option name) and CONTINUE'd.
 */
SYSCALL_HANDLER(setsockopt)
{
	static const int ip_refused[] = { IP_OPTIONS, IP_RETOPTS };
	static const int ip6_refused[] = { 3, 4, 5, 6, 9, 54, 55, 57, 59 };
	int level = ARG_INT(1), name = ARG_INT(2);
	char detail[96];

	for (size_t i = 0; level == IPPROTO_IP && i < PV_ARRAY_SIZE(ip_refused); i++)
		if (name == ip_refused[i])
			goto refuse;
	for (size_t i = 0; level == IPPROTO_IPV6 && i < PV_ARRAY_SIZE(ip6_refused); i++)
		if (name == ip6_refused[i])
			goto refuse;
	return syscall_continue();
refuse:
	snprintf(detail, sizeof(detail),
		 "setsockopt(level %d, option %d): routing options are refused", level, name);
	return syscall_deny(ctx, EACCES, "net.refused", NULL, NULL, detail);
}
