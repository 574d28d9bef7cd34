// Queue/CoDel for ns-2.35: CoDel as K. Nichols' and V. Jacobson's ns-2 module (queue/codel.cc,
// 2012) decides, rewritten for aqmlab's validation from that module's documented behaviour:
// - enqueue: tail drop once the queue holds qlim_ packets, else timestamp and queue;
// - the sojourn time is taken when the link asks for the next packet (the start of its
//   transmission); a packet is "above" when its sojourn is at least target_ and more than the
//   largest packet seen so far (256 bytes at first) is left queued behind it;
// - the first drop comes once the queue has been above for interval_; an empty queue counts as
//   below; in dropping state the next drop is due at drop_next + interval/sqrt(count);
// - on re-entry within 16 intervals of the last scheduled drop, count restarts at count - 1.
#include <math.h>
#include "queue.h"

class NsCoDelQueue : public Queue {
public:
	NsCoDelQueue();
protected:
	void enque(Packet* p);
	Packet* deque();
private:
	Packet* take(int& ok_to_drop);
	double next_after(double t) const { return t + interval_ / sqrt((double)count_); }

	PacketQueue* q_;
	double target_;
	double interval_;
	double first_above_;  // 0: below; otherwise when "above" has lasted an interval
	double drop_next_;
	int count_;
	int dropping_;
	int largest_;         // bytes
};

static class NsCoDelClass : public TclClass {
public:
	NsCoDelClass() : TclClass("Queue/CoDel") {}
	TclObject* create(int, const char* const*) { return new NsCoDelQueue; }
} class_ns_codel;

NsCoDelQueue::NsCoDelQueue()
	: q_(new PacketQueue), first_above_(-1), drop_next_(0), count_(0), dropping_(0), largest_(256)
{
	pq_ = q_;
	bind_time("target_", &target_);
	bind_time("interval_", &interval_);
}

void NsCoDelQueue::enque(Packet* p)
{
	if (q_->length() >= qlim_) {
		drop(p);
		return;
	}
	HDR_CMN(p)->ts_ = Scheduler::instance().clock();
	q_->enque(p);
}

Packet* NsCoDelQueue::take(int& ok_to_drop)
{
	double now = Scheduler::instance().clock();
	ok_to_drop = 0;
	Packet* p = q_->deque();
	if (p == 0) {
		first_above_ = 0;
		return 0;
	}
	int size = HDR_CMN(p)->size();
	if (size > largest_)
		largest_ = size;
	double sojourn = now - HDR_CMN(p)->ts_;
	if (sojourn < target_ || q_->byteLength() <= largest_)
		first_above_ = 0;
	else if (first_above_ == 0)
		first_above_ = now + interval_;
	else if (now >= first_above_)
		ok_to_drop = 1;
	return p;
}

Packet* NsCoDelQueue::deque()
{
	double now = Scheduler::instance().clock();
	int ok;
	Packet* p = take(ok);
	if (dropping_) {
		if (!ok)
			dropping_ = 0;
		while (dropping_ && now >= drop_next_) {
			drop(p);
			++count_;
			p = take(ok);
			if (ok)
				drop_next_ = next_after(drop_next_);
			else
				dropping_ = 0;
		}
	} else if (ok) {
		drop(p);
		p = take(ok);
		dropping_ = 1;
		count_ = (count_ > 1 && now - drop_next_ < 16 * interval_) ? count_ - 1 : 1;
		drop_next_ = next_after(now);
	}
	return p;
}
