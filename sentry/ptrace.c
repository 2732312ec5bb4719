/*
 * ptrace.c - the supervisor as tracer of every sandbox task.
 *
 * Why ptrace next to seccomp notification: (1) every task is known from its
 * creation (fork, vfork and clone events arrive while the parent is stopped,
 * so a child inherits exactly the working directory and umask its parent
 * had when it forked); (2) PTRACE_O_EXITKILL makes the kernel kill every
 * tracee if the supervisor dies, so no task of the run can outlive it;
 * (3) an exec can be rewritten onto memory and an fd the sentry controls
 * (sentry/exec.c).  Tasks otherwise run with PTRACE_CONT: no syscall stops,
 * so the cost is paid only at task creation, exec, signals and exit.
 *
 * Stops handled (ptrace(2), "Stopped states"): fork/vfork/clone events,
 * exec events, PTRACE_EVENT_STOP (the attach stop of a new task, an
 * interrupt, or a group-stop, kept with PTRACE_LISTEN so job control works),
 * signal-delivery-stops (the signal is delivered unchanged), and exits.
 */
#include "sentry.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

unsigned long sentry_ptrace_options(void)
{
	return PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |
	       PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL;
}

static struct sentry_task *task_find(struct sentry *s, pid_t tid)
{
	for (struct sentry_task *t = s->tasks[(unsigned int)tid % PV_ARRAY_SIZE(s->tasks)]; t;
	     t = t->next)
		if (t->tid == tid)
			return t;
	return NULL;
}

static void task_forget(struct sentry *s, pid_t tid)
{
	struct sentry_task **pp = &s->tasks[(unsigned int)tid % PV_ARRAY_SIZE(s->tasks)];

	while (*pp) {
		if ((*pp)->tid == tid) {
			struct sentry_task *dead = *pp;

			*pp = dead->next;
			if (dead->proc->ntasks)
				dead->proc->ntasks--;
			free(dead);
			return;
		}
		pp = &(*pp)->next;
	}
}

/* A vfork child @child exec'd or exited: its parent runs again. */
static void vfork_done(struct sentry *s, pid_t child)
{
	for (size_t h = 0; h < PV_ARRAY_SIZE(s->tasks); h++)
		for (struct sentry_task *t = s->tasks[h]; t; t = t->next)
			if (t->vfork_child == child)
				t->vfork_child = 0;
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* An exec replaced the process of @pid: threads other than the exec'ing one
 * are gone, and a non-leader that exec'd now carries the leader's tid
 * (ptrace(2), "execve(2) under ptrace"). */
static void after_exec(struct sentry *s, pid_t pid)
{
	struct sentry_task *t = task_find(s, pid);
	struct sentry_proc *p = t ? t->proc : sentry_proc_find(s, pid);

	if (!p)
		return;
	for (size_t h = 0; h < PV_ARRAY_SIZE(s->tasks); h++) {
		struct sentry_task **pp = &s->tasks[h];

		while (*pp) {
			if ((*pp)->proc == p && (*pp)->tid != pid) {
				struct sentry_task *dead = *pp;

				*pp = dead->next;
				free(dead);
			} else {
				pp = &(*pp)->next;
			}
		}
	}
	p->ntasks = task_find(s, pid) ? 1 : 0;
	p->loader_exec = false;
}

void sentry_ptrace_event(struct sentry *s, pid_t pid, int status)
{
	struct sentry_task *t;
	unsigned long msg = 0;
	int sig, event;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		struct sentry_proc *p;

		vfork_done(s, pid);
		if (pid == s->child && !s->main_exited) {
			s->main_exited = true;
			s->main_status = status;
			s->outcome->duration_ms = (sentry_now_ns() - s->start_ns) / 1000000;
		}
		t = task_find(s, pid);
		p = t ? t->proc : sentry_proc_find(s, pid);
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS && t) {
			/* Killed by the filter itself (SECCOMP_RET_KILL_PROCESS: a
			 * foreign architecture such as int 0x80, or an x32
			 * number): no notification reached the sentry, so the
			 * event is written here.  The number is lost with the
			 * process. */
			struct seccomp_notif req = { .pid = (__u32)pid };
			struct syscall_ctx kctx = { .sentry = s, .req = &req, .task = t };

			req.data.nr = -1;
			audit_event_emit(&kctx, "kill", 0, "filter.kill", NULL, NULL,
					 "killed by the seccomp filter (foreign architecture or x32 "
					 "system call)");
		}
		task_forget(s, pid);
		if (p && p->tgid == pid)
			sentry_proc_reap(s, p);
		return;
	}
	if (!WIFSTOPPED(status))
		return;

	sig = WSTOPSIG(status);
	event = status >> 16;
	/* Register the task at its first stop, while it cannot run yet. */
	t = sentry_task_get(s, pid);
	if (!t) {
		/* A tracee that is not ours cannot exist; fail closed. */
		kill(pid, SIGKILL);
		return;
	}

	switch (event) {
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		/* The parent is stopped: the child is registered now with the
		 * parent's exact state. */
		if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) == 0) {
			sentry_task_get(s, (pid_t)msg);
			if (event == PTRACE_EVENT_VFORK)
				t->vfork_child = (pid_t)msg;
		}
		t->started = true;
		ptrace(PTRACE_CONT, pid, 0, 0);
		return;
	case PTRACE_EVENT_EXEC:
		if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) == 0)
			vfork_done(s, (pid_t)msg);
		vfork_done(s, pid);
		after_exec(s, pid);
		t->started = true;
		ptrace(PTRACE_CONT, pid, 0, 0);
		return;
	case PTRACE_EVENT_STOP:
		if (t->started && is_stop_signal(sig)) {
			/* Group-stop: stay stopped until SIGCONT, as without a
			 * tracer. */
			t->listening = true;
			ptrace(PTRACE_LISTEN, pid, 0, 0);
			return;
		}
		/* The attach stop of a new task, an interrupt we asked for and
		 * no longer need, or the end of a group-stop. */
		t->started = true;
		t->listening = false;
		ptrace(PTRACE_CONT, pid, 0, 0);
		return;
	default:
		break;
	}
	t->started = true;
	if (sig == (SIGTRAP | 0x80)) {
		/* A syscall stop outside an exec rewrite: not ours to keep. */
		ptrace(PTRACE_CONT, pid, 0, 0);
		return;
	}
	/* Signal-delivery-stop: deliver the signal unchanged. */
	ptrace(PTRACE_CONT, pid, 0, (void *)(uintptr_t)sig);
}

void sentry_ptrace_drain(struct sentry *s)
{
	int status;
	pid_t pid;

	/* Events held back during an exec first, in order. */
	for (size_t i = 0; i < s->ndeferred; i++)
		sentry_ptrace_event(s, s->deferred[i].pid, s->deferred[i].status);
	s->ndeferred = 0;
	while ((pid = waitpid(-1, &status, WNOHANG | __WALL)) > 0)
		sentry_ptrace_event(s, pid, status);
}
