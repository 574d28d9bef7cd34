// Queue/sfqCoDel for ns-2.35: the "SFQ + CoDel" of K. Nichols' ns-2 module (queue/sfqcodel.cc as
// published in 2012, the form the transients2014 study cites), rewritten for aqmlab's validation
// from that module's documented behaviour:
// - bins_ bins (1024); a packet's bin is Bob Jenkins' lookup3 hash of (daddr, saddr,
//   dport << 16 | sport) with initval 0, modulo the number of bins;
// - one shared limit: an arrival finding qlim_ packets queued in all bins is dropped;
// - one circular schedule, one packet per bin per visit (no byte quantum); a bin that becomes
//   active goes after the other new bins but before the continuing ones (after the last bin when
//   the scan reaches it); an emptied bin stays on the schedule until the scheduler next reaches
//   it;
// - per-bin CoDel state, but the one-packet guard compares the total backlog of all bins with
//   the largest packet seen (256 bytes at first); a bin never dequeued from starts with
//   first_above = -1, so its first packet may be dropped at once;
// - a bin that goes above again within 8 intervals of its last scheduled drop with count > 1
//   waits interval/sqrt(count) instead of interval; on entering the dropping state count
//   restarts at count - 2 (if above 2, within 8 intervals), else 1; count grows after a drop
//   only while the bin stays above; a bin keeps its CoDel state while it is off the schedule.
// Switches, for runs that change one thing (all off by default, as the 2012 module):
// - fresh_below_ 1: a bin never dequeued from starts below target (first_above 0, not -1);
// - clear_on_empty_ 1: a bin taken off the schedule leaves the dropping state;
// - empty_below_ 1: a bin taken off the schedule counts as below target (first_above 0);
// - last_below_ 1: a packet that leaves its bin empty counts as below target;
// - plain_reentry_ 1: going above always waits a full interval (no interval/sqrt(count)).
#include <math.h>
#include "queue.h"
#include "ip.h"

namespace {

struct Bin {
	PacketQueue q;
	double first_above;
	double drop_next;
	int count;
	int dropping;
	int fresh;   // put on the schedule and not served since
	int listed;  // on the schedule
	Bin* prev;
	Bin* next;
	Bin() : first_above(-1), drop_next(0), count(0), dropping(0), fresh(0), listed(0), prev(0), next(0) {}
};

inline u_int32_t rotl(u_int32_t x, int k) { return (x << k) | (x >> (32 - k)); }

// lookup3's hashword() core for three words (mix then final), initval 0.
u_int32_t hash3(u_int32_t a, u_int32_t b, u_int32_t c)
{
	u_int32_t init = 0xdeadbeef + (3 << 2);
	a += init; b += init; c += init;
	a -= c; a ^= rotl(c, 4);  c += b;
	b -= a; b ^= rotl(a, 6);  a += c;
	c -= b; c ^= rotl(b, 8);  b += a;
	a -= c; a ^= rotl(c, 16); c += b;
	b -= a; b ^= rotl(a, 19); a += c;
	c -= b; c ^= rotl(b, 4);  b += a;
	c ^= b; c -= rotl(b, 14);
	a ^= c; a -= rotl(c, 11);
	b ^= a; b -= rotl(a, 25);
	c ^= b; c -= rotl(b, 16);
	a ^= c; a -= rotl(c, 4);
	b ^= a; b -= rotl(a, 14);
	c ^= b; c -= rotl(b, 24);
	return c;
}

}  // namespace

class NsSfqCoDelQueue : public Queue {
public:
	NsSfqCoDelQueue();
	~NsSfqCoDelQueue() { delete[] bins_; }
protected:
	void enque(Packet* p);
	Packet* deque();
private:
	enum { NBINS = 1024 };
	Bin* bin_of(Packet* p);
	void schedule(Bin* b);
	void unlist(Bin* b);
	Bin* ready();
	Packet* take(Bin* b, int& ok_to_drop);
	Packet* serve(Bin* b);
	double next_after(double t, int count) const { return t + interval_ / sqrt((double)count); }

	Bin* bins_;
	Bin* head_;        // next bin to serve
	double target_;
	double interval_;
	int fresh_below_;
	int clear_on_empty_;
	int empty_below_;
	int last_below_;
	int plain_reentry_;
	int packets_;      // all bins
	int bytes_;        // all bins
	int largest_;
};

static class NsSfqCoDelClass : public TclClass {
public:
	NsSfqCoDelClass() : TclClass("Queue/sfqCoDel") {}
	TclObject* create(int, const char* const*) { return new NsSfqCoDelQueue; }
} class_ns_sfqcodel;

NsSfqCoDelQueue::NsSfqCoDelQueue()
	: bins_(new Bin[NBINS]), head_(0), packets_(0), bytes_(0), largest_(256)
{
	pq_ = &bins_[0].q;
	bind_time("target_", &target_);
	bind_time("interval_", &interval_);
	bind("fresh_below_", &fresh_below_);
	bind("clear_on_empty_", &clear_on_empty_);
	bind("empty_below_", &empty_below_);
	bind("last_below_", &last_below_);
	bind("plain_reentry_", &plain_reentry_);
}

Bin* NsSfqCoDelQueue::bin_of(Packet* p)
{
	hdr_ip* ip = hdr_ip::access(p);
	u_int32_t ports = ((u_int32_t)ip->dport() << 16) | (u_int32_t)ip->sport();
	return &bins_[hash3(ip->daddr(), ip->saddr(), ports) % NBINS];
}

// A bin that becomes active goes after the run of new bins at the head, before the first old
// bin, except that when the scan stops on the last bin of the circle it goes after that bin.
void NsSfqCoDelQueue::schedule(Bin* b)
{
	b->fresh = 1;
	b->listed = 1;
	if (head_ == 0) {
		head_ = b->prev = b->next = b;
		return;
	}
	Bin* at = head_;
	while (at->fresh && at->next != head_)
		at = at->next;
	if (at->next == head_) {  // reached the last bin (new or not): append after it
		b->prev = at;
		b->next = head_;
		at->next = b;
		head_->prev = b;
		return;
	}
	b->next = at;
	b->prev = at->prev;
	at->prev->next = b;
	at->prev = b;
	if (at == head_)
		head_ = b;
}

void NsSfqCoDelQueue::enque(Packet* p)
{
	if (packets_ >= qlim_) {
		drop(p);
		return;
	}
	HDR_CMN(p)->ts_ = Scheduler::instance().clock();
	++packets_;
	bytes_ += HDR_CMN(p)->size();
	Bin* b = bin_of(p);
	b->q.enque(p);
	if (!b->listed)
		schedule(b);
}

// Takes b off the schedule; the scheduler moves on to its successor.
void NsSfqCoDelQueue::unlist(Bin* b)
{
	b->listed = 0;
	if (clear_on_empty_)
		b->dropping = 0;
	if (empty_below_)
		b->first_above = 0;
	if (b->next == b) {
		head_ = 0;
	} else {
		b->prev->next = b->next;
		b->next->prev = b->prev;
		head_ = b->next;
	}
	b->next = b->prev = 0;
}

// The first bin from the head of the schedule that has a packet (empty ones are dropped from it).
Bin* NsSfqCoDelQueue::ready()
{
	while (head_ != 0 && head_->q.length() == 0)
		unlist(head_);
	return head_;
}

Packet* NsSfqCoDelQueue::take(Bin* b, int& ok_to_drop)
{
	double now = Scheduler::instance().clock();
	ok_to_drop = 0;
	Packet* p = b->q.deque();
	if (p == 0)
		return 0;
	int size = HDR_CMN(p)->size();
	--packets_;
	bytes_ -= size;
	if (size > largest_)
		largest_ = size;
	if (fresh_below_ && b->first_above < 0)
		b->first_above = 0;
	double sojourn = now - HDR_CMN(p)->ts_;
	if (sojourn < target_ || bytes_ <= largest_ || (last_below_ && b->q.length() == 0))
		b->first_above = 0;
	else if (b->first_above == 0)
		b->first_above = (!plain_reentry_ && now - b->drop_next < 8 * interval_ && b->count > 1)
			? next_after(now, b->count) : now + interval_;
	else if (now >= b->first_above)
		ok_to_drop = 1;
	return p;
}

// CoDel on one bin: returns the packet to send from it, or 0 if its drops emptied it.
Packet* NsSfqCoDelQueue::serve(Bin* b)
{
	double now = Scheduler::instance().clock();
	int ok;
	Packet* p = take(b, ok);
	if (b->dropping) {
		if (!ok)
			b->dropping = 0;
		while (b->dropping && now >= b->drop_next) {
			drop(p);
			p = take(b, ok);
			if (p == 0)
				ready();
			if (ok) {
				++b->count;
				b->drop_next = next_after(b->drop_next, b->count);
			} else {
				b->dropping = 0;
			}
		}
	} else if (ok) {
		drop(p);
		p = take(b, ok);
		if (p == 0)
			ready();
		b->dropping = 1;
		b->count = (b->count > 2 && now - b->drop_next < 8 * interval_) ? b->count - 2 : 1;
		b->drop_next = next_after(now, b->count);
	}
	return p;
}

Packet* NsSfqCoDelQueue::deque()
{
	Packet* p = 0;
	while (p == 0) {
		Bin* b = ready();
		if (b == 0)
			return 0;
		b->fresh = 0;
		p = serve(b);
	}
	if (head_ != 0)
		head_ = head_->next;
	return p;
}
