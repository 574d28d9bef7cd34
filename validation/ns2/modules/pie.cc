// Queue/PIE for ns-2.35: PIE as the published Cisco ns-2 module (queue/pie.cc, 2013-2014,
// Natarajan, Pan, Piglione, White, Hayakawa; also ns-2.36rc1) runs outside its DOCSIS mode,
// rewritten for aqmlab's validation from that module's documented behaviour:
// - enqueue: a forced drop when the backlog in bytes reaches qlim_ * mean_pktsize_; otherwise
//   no random drop while burst allowance is left, while the last delay estimate is below half
//   of qdelay_ref_ with p < 0.2, or while at most 2 * mean_pktsize_ bytes are queued; else a
//   drop with probability p. The first arrival ever (burst state "none") arms the allowance
//   (burst_allowance_) and is still judged;
// - dequeue: departure-rate measurement in bytes: a cycle starts at a departure that leaves at
//   least dq_threshold_ bytes queued, counts the bytes that leave (the starting packet
//   included) and ends once dq_threshold_ bytes have left; the rate average takes the first
//   cycle's rate, then halves with each new one; cycles run on regardless of the updates;
// - every tUpdate_ (the first at start): qdelay = backlog / rate (0 before the first rate);
//   p += scaled a (qdelay - ref) + b (qdelay - qdelay_old) (step /32 below p 0.001, /8 below
//   0.01, /2 below 0.1, x2 below 1, x8 below 10, else x32; at most +0.02 once p >= 0.1),
//   x0.98 when both delays are 0, +0.02 above 200 ms; p = 0 while allowance is left; the
//   allowance falls by tUpdate_; the rate estimate is forgotten when both delays are below
//   half the reference with p = 0; the burst state returns to "none" after 1.5 s calm.
#include <math.h>
#include "queue.h"
#include "random.h"
#include "timer-handler.h"

class NsPieQueue;

class NsPieTimer : public TimerHandler {
public:
	NsPieTimer(NsPieQueue* q) : q_(q) {}
protected:
	void expire(Event*);
private:
	NsPieQueue* q_;
};

class NsPieQueue : public Queue {
public:
	NsPieQueue();
	void update();
protected:
	void enque(Packet* p);
	Packet* deque();
	void reset();
	int command(int argc, const char* const* argv);
private:
	enum Burst { NONE, IN_BURST, PROTECTING };
	static const double RESET_AFTER_S;
	bool early_drop(Packet* p, int backlog);
	void measure(int size);
	double scaled_step(double step) const;
	void track_burst(double qdelay);

	PacketQueue* q_;
	NsPieTimer timer_;
	double a_, b_, t_update_, qdelay_ref_, max_burst_;
	int mean_pktsize_, dq_threshold_;
	double p_, qdelay_old_, allowance_, rate_, cycle_start_;
	int cycle_bytes_, measuring_, burst_calm_;
	Burst burst_;
};

const double NsPieQueue::RESET_AFTER_S = 1.5;

static class NsPieClass : public TclClass {
public:
	NsPieClass() : TclClass("Queue/PIE") {}
	TclObject* create(int, const char* const*) { return new NsPieQueue; }
} class_ns_pie;

void NsPieTimer::expire(Event*) { q_->update(); }

NsPieQueue::NsPieQueue() : q_(new PacketQueue), timer_(this)
{
	pq_ = q_;
	bind("a_", &a_);
	bind("b_", &b_);
	bind_time("tUpdate_", &t_update_);
	bind_time("qdelay_ref_", &qdelay_ref_);
	bind_time("burst_allowance_", &max_burst_);
	bind("mean_pktsize_", &mean_pktsize_);
	bind("dq_threshold_", &dq_threshold_);
	reset();
}

void NsPieQueue::reset()
{
	p_ = qdelay_old_ = allowance_ = rate_ = cycle_start_ = 0;
	cycle_bytes_ = measuring_ = burst_calm_ = 0;
	burst_ = NONE;
	timer_.resched(0);
	Queue::reset();
}

// ns-2's simplex-link hands every queue class whose name contains "PI" its link ("$q link");
// the published module uses it only in its DOCSIS mode, so it is accepted and not used.
int NsPieQueue::command(int argc, const char* const* argv)
{
	if (argc == 3 && strcmp(argv[1], "link") == 0)
		return TCL_OK;
	return Queue::command(argc, argv);
}

void NsPieQueue::enque(Packet* p)
{
	int backlog = q_->byteLength();
	if (backlog >= qlim_ * mean_pktsize_ || early_drop(p, backlog))
		drop(p);
	else
		q_->enque(p);
}

bool NsPieQueue::early_drop(Packet*, int backlog)
{
	if (allowance_ > 0)
		return false;
	if (burst_ == NONE) {
		burst_ = PROTECTING;
		allowance_ = max_burst_;
	}
	double u = Random::uniform();
	if (qdelay_old_ < 0.5 * qdelay_ref_ && p_ < 0.2)
		return false;
	if (backlog <= 2 * mean_pktsize_)
		return false;
	return u <= p_;
}

void NsPieQueue::measure(int size)
{
	double now = Scheduler::instance().clock();
	if (!measuring_ && q_->byteLength() >= dq_threshold_) {
		cycle_start_ = now;
		cycle_bytes_ = 0;
		measuring_ = 1;
	}
	if (!measuring_)
		return;
	cycle_bytes_ += size;
	if (cycle_bytes_ < dq_threshold_)
		return;
	double rate = cycle_bytes_ / (now - cycle_start_);
	rate_ = rate_ == 0 ? rate : 0.5 * rate_ + 0.5 * rate;
	cycle_bytes_ = 0;
	measuring_ = q_->byteLength() > dq_threshold_;
	cycle_start_ = now;
}

Packet* NsPieQueue::deque()
{
	Packet* p = q_->deque();
	measure(p ? HDR_CMN(p)->size() : 0);
	return p;
}

double NsPieQueue::scaled_step(double step) const
{
	static const double bound[] = {0.001, 0.01, 0.1, 1, 10};
	static const double factor[] = {1.0 / 32, 1.0 / 8, 1.0 / 2, 2, 8};
	double f = 32;
	for (int i = 0; i < 5; ++i) {
		if (p_ < bound[i]) {
			f = factor[i];
			break;
		}
	}
	step *= f;
	return (p_ >= 0.1 && step > 0.02) ? 0.02 : step;
}

void NsPieQueue::track_burst(double qdelay)
{
	bool calm = qdelay < 0.5 * qdelay_ref_ && qdelay_old_ < 0.5 * qdelay_ref_ && p_ == 0;
	if (calm && allowance_ == 0) {
		if (burst_ == PROTECTING) {
			burst_ = IN_BURST;
			burst_calm_ = 0;
		} else if (burst_ == IN_BURST && ++burst_calm_ > (int)(RESET_AFTER_S / t_update_)) {
			burst_calm_ = 0;
			burst_ = NONE;
		}
	} else if (burst_ == IN_BURST) {
		burst_calm_ = 0;
	}
}

void NsPieQueue::update()
{
	bool no_rate = rate_ <= 0;
	double qdelay = no_rate ? 0 : q_->byteLength() / rate_;
	if (allowance_ > 0) {
		p_ = 0;
	} else {
		double p = p_ + scaled_step(a_ * (qdelay - qdelay_ref_) + b_ * (qdelay - qdelay_old_));
		if (qdelay == 0 && qdelay_old_ == 0)
			p *= 0.98;
		else if (qdelay > 0.2)
			p += 0.02;
		p_ = p > 0 ? p : 0;
	}
	allowance_ = allowance_ < t_update_ ? 0 : allowance_ - t_update_;
	if (qdelay < 0.5 * qdelay_ref_ && qdelay_old_ < 0.5 * qdelay_ref_ && p_ == 0 && !no_rate)
		rate_ = 0;
	track_burst(qdelay);
	qdelay_old_ = qdelay;
	timer_.resched(t_update_);
}
