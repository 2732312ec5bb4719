/*
 * socket.c - sockets.  In this version no socket reaches anything outside
 * the sandbox: socket() is refused for every family (EACCES), socketpair()
 * is allowed in BPF for AF_UNIX stream/seqpacket pairs only, and bind and
 * connect are refused (bind on a pair's socket would create a host path;
 * connect could reach host AF_UNIX services).  Each refusal writes an audit
 * event with the family or address.  Sources: socket(2), unix(7), bind(2),
 * connect(2).
 */
#include "internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

static const char *family_name(int family)
{
	switch (family) {
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
	default:
		return "other";
	}
}

SYSCALL_HANDLER(socket)
{
	char detail[96];

	snprintf(detail, sizeof(detail), "socket(%s=%d, type %d): no network in this sandbox",
		 family_name(ARG_INT(0)), ARG_INT(0), ARG_INT(1));
	return syscall_deny(ctx, EACCES, "net.refused", NULL, NULL, detail);
}

SYSCALL_HANDLER(socketpair)
{
	char detail[96];

	snprintf(detail, sizeof(detail), "socketpair(%s=%d, type %d)", family_name(ARG_INT(0)),
		 ARG_INT(0), ARG_INT(1));
	return syscall_deny(ctx, EACCES, "net.refused", NULL, NULL, detail);
}

/* Render the sockaddr at @addr (@len bytes) for the audit log. */
static void describe_sockaddr(struct syscall_ctx *ctx, uint64_t addr, uint64_t len, char *out,
			      size_t size)
{
	struct sockaddr_storage ss;
	char ip[INET6_ADDRSTRLEN];

	snprintf(out, size, "unreadable");
	if (len < sizeof(sa_family_t) || len > sizeof(ss))
		return;
	memset(&ss, 0, sizeof(ss));
	if (guestmem_read(ctx, addr, &ss, len) < 0)
		return;
	switch (ss.ss_family) {
	case AF_INET: {
		const struct sockaddr_in *in = (const void *)&ss;

		inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
		snprintf(out, size, "%s:%u", ip, ntohs(in->sin_port));
		break;
	}
	case AF_INET6: {
		const struct sockaddr_in6 *in6 = (const void *)&ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
		snprintf(out, size, "[%s]:%u", ip, ntohs(in6->sin6_port));
		break;
	}
	case AF_UNIX: {
		const struct sockaddr_un *un = (const void *)&ss;
		size_t n = len - offsetof(struct sockaddr_un, sun_path);

		if (n == 0)
			snprintf(out, size, "unix:(unnamed)");
		else if (un->sun_path[0] == '\0')
			snprintf(out, size, "unix:@%.*s", (int)(n - 1), un->sun_path + 1);
		else
			snprintf(out, size, "unix:%.*s", (int)strnlen(un->sun_path, n),
				 un->sun_path);
		break;
	}
	default:
		snprintf(out, size, "family %d", ss.ss_family);
		break;
	}
}

static struct syscall_ret refuse_addr(struct syscall_ctx *ctx, const char *what)
{
	char address[160];

	describe_sockaddr(ctx, ARG(1), ARG_UINT(2), address, sizeof(address));
	return syscall_deny(ctx, EACCES, "net.refused", NULL, address, what);
}

SYSCALL_HANDLER(bind)
{
	return refuse_addr(ctx, "bind: no network in this sandbox");
}

SYSCALL_HANDLER(connect)
{
	return refuse_addr(ctx, "connect: no network in this sandbox");
}
