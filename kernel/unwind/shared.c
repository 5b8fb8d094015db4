// SPDX-License-Identifier: GPL-2.0
/*
 * One unwind work shared by all users of a tracer.
 *
 * perf registers one work for all events with defer_callchain and BPF one
 * for all programs that call bpf_unwind_user_request(), so that a kernel
 * entry is walked once whatever the number of events or programs, and
 * that the exit path costs nothing while a tracer has no user. Users come
 * and go at any rate (any user may open and close perf events in a loop),
 * while registering enables a static key and unregistering waits for two
 * grace periods and visits every thread: the release comes a second
 * after the last user went, and a user that comes back within that second
 * keeps the work registered, so that there is at most one unregistration a
 * second, and none while users keep coming.
 */

#include <linux/atomic.h>
#include <linux/cleanup.h>
#include <linux/mutex.h>
#include <linux/unwind_deferred.h>
#include <linux/workqueue.h>

#define UNWIND_SHARED_RELEASE_DELAY	HZ

/**
 * unwind_shared_get - a user of a shared unwind work arrived
 * @sw: the shared work
 *
 * Registers @sw's work with the first user. If that fails (every tracer
 * bit taken), requests through it fail with -EINVAL, and the next user
 * tries again.
 *
 * Context: task context. Sleeps whenever the tracer has no user (for the
 * first one, within the second after the last one went, and after a
 * failed registration), and then for as long as a release that runs
 * meanwhile takes: two grace periods and a visit of every thread.
 */
void unwind_shared_get(struct unwind_shared_work *sw)
{
	/*
	 * Registered and in use: the release work cannot unregister while
	 * the count is not zero, and only the locked path below raises it
	 * from zero.
	 */
	if (READ_ONCE(sw->registered) && atomic_inc_not_zero(&sw->users))
		return;

	guard(mutex)(&sw->lock);

	atomic_inc(&sw->users);
	if (!sw->registered)
		WRITE_ONCE(sw->registered,
			   !unwind_deferred_init(&sw->work, sw->func));
}

/*
 * Unregister once the last user is gone, unless a new one came meanwhile.
 * From a workqueue: the cancel waits for grace periods and for running
 * callbacks, which a user's release (perf's _free_event(), a BPF program's
 * free) must not, and it must not wait under its caller's locks.
 */
void unwind_shared_release(struct work_struct *release)
{
	struct unwind_shared_work *sw =
		container_of(to_delayed_work(release), struct unwind_shared_work,
			     release);

	guard(mutex)(&sw->lock);

	if (atomic_read(&sw->users) || !sw->registered)
		return;
	unwind_deferred_cancel(&sw->work);
	WRITE_ONCE(sw->registered, false);
}

/**
 * unwind_shared_put - a user of a shared unwind work went away
 * @sw: the shared work
 *
 * The last one (re)starts the release of @sw's work, a second later: a
 * release already pending from an earlier last user is pushed back, so that
 * users that come and go keep the work registered. After the release, no
 * callback of @sw runs any more: a user that goes away with requests
 * pending is never called for them if it was the last, and the callback
 * must not reach into a user that is gone in any case.
 *
 * Context: any but NMI (it arms a timer); does not sleep.
 */
void unwind_shared_put(struct unwind_shared_work *sw)
{
	if (atomic_dec_and_test(&sw->users))
		mod_delayed_work(system_wq, &sw->release,
				 UNWIND_SHARED_RELEASE_DELAY);
}
