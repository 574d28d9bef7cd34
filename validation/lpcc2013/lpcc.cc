// lpcc2013 3c in ns-3 3.44: N best-effort NewReno flows and N low-priority flows (TcpLedbat or
// TcpLp), all backlogged from t = 0, through one bottleneck (4 Mb/s, 400 packets, 50 ms RTT,
// 60 s), as aqmlab's python/aqmlab/scenarios/lpcc2013/base.toml. One run per invocation; prints
// one JSON object (every setting plus the study's per-run metrics).
//
// Path (rtt split in quarters, as validation/transients2014/transients.cc):
//   be sender --(10 Gb/s, rtt/4)--\
//                                  A [qdisc under test, 1-packet device queue] --(rate, rtt/4)--> receiver
//   lp sender --(10 Gb/s, rtt/4)--/
//   receiver [pfifo, same limit] --(rate, rtt/4)--> A --(10 Gb/s, rtt/4)--> senders
// Two sender nodes, so that each carries its own TcpL4Protocol::SocketType.
//
// Metrics (aqmlab's metrics.py definitions over the whole run, [0, duration]):
//   utilisation = IP bytes that start transmission on the bottleneck / (rate x duration / 8)
//   E[Q]        = time average of the packets waiting at the bottleneck: in the qdisc plus the
//                 device queue below it (the packet being serialised is in neither), exact
//                 integral of the step function; E[Q]/Q_max with Q_max = the qdisc limit
//   TCP%        = bytes delivered to the best-effort sinks / bytes delivered to all sinks
//
// Usage: lpcc --lpcc=ledbat --qdisc=pfifo --seed=1 [--rate=4Mbps --limit=400 --rtt=50ms ...]

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include "../ns3_json.h"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;
using json::B;
using json::Num;
using json::OptNum;
using json::Q;

namespace
{

// ---------------------------------------------------------------- low-priority variants (experiment)

// Which ACK the sender is processing: set by the socket's Rx trace, which TcpSocketBase fires
// before it processes the segment (tcp-socket-base.cc DoForwardUp, m_rxTrace).
bool g_ackIsDup = false;
bool g_skipDupSamples = false; // --newack
uint32_t g_tsOffsetMs = 0;     // --ts-offset-ms
bool g_gateGrowth = false;     // --lp-gate
uint32_t g_allowedIncrease = 0; // --ledbat-allowed-increase
bool g_exitNoGrowth = false;    // --exit-no-growth
bool g_nrOutstanding = false;   // --nr-outstanding-ssthresh
bool g_ledbatHalveCwnd = false; // --ledbat-halve-cwnd
uint32_t g_rxFlow = 0;          // the flow whose segment the sender is processing (Rx trace)
std::ofstream g_ledbatLog;      // --ledbat-log: one line per PktsAcked / IncreaseWindow / cwnd change

// A delay-based controller (TcpLp, TcpLedbat) with switchable departures, each isolating one
// model choice:
// * newack: no delay sample (and, for TcpLp, no early-congestion test) on a duplicate ACK.
//   ns-3 3.44 calls PktsAcked(tcb, 1, srtt) on every duplicate ACK (tcp-socket-base.cc
//   ProcessAck, "Artificially call PktsAcked"), and TcpLp::PktsAcked and TcpLedbat::PktsAcked
//   take TSval - TSecr as a one-way delay sample whenever the rtt argument is non-zero. While a
//   hole is open the receiver keeps echoing the TSval of the last in-order segment
//   (ProcessOptionTimestamp updates m_timestampToEcho only for in-order data, RFC 7323), so those
//   samples grow with the time spent in recovery. Linux calls tcp_lp's pkts_acked only for ACKs
//   that acknowledge data (tcp_clean_rtx_queue).
// * ts offset: the receiver's timestamp clock runs ahead of the sender's by a constant, as between
//   real hosts (every sample TSval - TSecr grows by it). ns-3 stamps both ends from the one
//   simulator clock (TcpOptionTS::NowToTsValue, ms).
// * lp-gate (TcpLp): no window growth at all, slow start included, within the inference time
//   (3 x (now - TSecr)) after an early-congestion cut, as Linux's tcp_lp_cong_avoid (which wraps
//   tcp_reno_cong_avoid, slow start and avoidance) and aqmlab's tcp_lp.rs. ns-3's TcpLp gates
//   only CongestionAvoidance, so after a cut to one segment below ssthresh it slow-starts at once.
// * ledbat allowed increase (TcpLedbat): RFC 6817 2.4.2 caps cwnd at flightsize + ALLOWED_INCREASE
//   x MSS (ALLOWED_INCREASE 1). TcpLedbat::CongestionAvoidance caps it at m_highTxMark -
//   m_lastAckedSeq + acked bytes, and TcpSocketBase::ProcessAck has already moved m_lastAckedSeq
//   to this ACK: the cap is the flight before the ACK, without the allowance, so a window-limited
//   flow cannot grow. The probe moves m_lastAckedSeq back by ALLOWED_INCREASE x MSS around the
//   call, which adds the allowance.
// * exit no growth: no IncreaseWindow on the full ACK that ends fast recovery. On that ACK
//   TcpSocketBase::ProcessAck sets cwnd to ssthresh and then calls IncreaseWindow with
//   segmentsAcked = every segment the ACK covers (the whole window of the loss, already seen as
//   duplicate ACKs). TcpNewReno grows once per call (MSS^2 / cwnd), but TcpLedbat scales its
//   increase by segmentsAcked: with ssthresh about half the flight it adds about 2 x off_target
//   segments at once after every halving. RFC 6582's full ACK deflates cwnd to ssthresh without
//   an increase; aqmlab's controllers see that ACK while still in recovery and do not grow on it.
//   The probe
//   notes a PktsAcked made in CA_RECOVERY (ProcessAck calls it just before leaving recovery)
//   and skips the IncreaseWindow that follows it.
// * ledbat halve cwnd (TcpLedbat): on loss and timeout ssthresh = max(MinCwnd x MSS, cwnd / 2),
//   RFC 6817 2.4.2's cwnd = max(cwnd / 2, MIN_CWND x MSS) and aqmlab's ledbat.rs, which the
//   recovery then sets cwnd to. TcpLedbat inherits TcpNewReno::GetSsThresh, half the pipe
//   EnterRecovery passes (see TcpNewRenoOutstanding below): about (cwnd - 1) / 2.

// NewReno with aqmlab's loss rule (--nr-outstanding-ssthresh, every NewReno flow): on loss and
// timeout ssthresh = max(2 MSS, outstanding / 2), outstanding = m_highTxMark - m_lastAckedSeq
// (all data sent and not cumulatively acknowledged, the segments sent by limited transmit
// included), as aqmlab's NewReno (cc/mod.rs half_flight of the sender's FlightSize high_data -
// snd_una). TcpNewReno::GetSsThresh halves what TcpSocketBase::EnterRecovery passes it without
// SACK: the pipe after AddRenoSack and MarkHeadAsLost plus one segment, about cwnd - 1 after two
// limited-transmit segments. ns-2's NewReno halves cwnd (TcpAgent::slowdown, window() / 2), and
// RFC 5681 3.2 step 2 leaves the data sent by limited transmit out of FlightSize.
class TcpNewRenoOutstanding : public TcpNewReno
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("TcpNewRenoOutstanding")
                                .SetParent<TcpNewReno>()
                                .SetGroupName("Internet")
                                .AddConstructor<TcpNewRenoOutstanding>();
        return tid;
    }

    TcpNewRenoOutstanding() = default;

    TcpNewRenoOutstanding(const TcpNewRenoOutstanding& other) = default;

    std::string GetName() const override
    {
        return "TcpNewRenoOutstanding";
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t /*bytesInFlight*/) override
    {
        auto outstanding = static_cast<uint32_t>(tcb->m_highTxMark.Get() - tcb->m_lastAckedSeq);
        return std::max(2 * tcb->m_segmentSize, outstanding / 2);
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpNewRenoOutstanding>(this);
    }
};

template <class Base>
class LpProbe : public Base
{
  public:
    static TypeId GetTypeId();

    LpProbe() = default;

    LpProbe(const LpProbe& other) = default;

    std::string GetName() const override
    {
        return Base::GetName() + "Probe";
    }

    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt) override
    {
        m_exitingRecovery = tcb->m_congState == TcpSocketState::CA_RECOVERY;
        if (g_skipDupSamples && g_ackIsDup)
        {
            return;
        }
        uint32_t tsval = tcb->m_rcvTimestampValue;
        uint32_t before = tcb->m_cWnd.Get();
        tcb->m_rcvTimestampValue = tsval + g_tsOffsetMs;
        Base::PktsAcked(tcb, segmentsAcked, rtt);
        if (g_ledbatLog.is_open())
        {
            Log('P', tcb, segmentsAcked, before);
        }
        tcb->m_rcvTimestampValue = tsval;
        if (tcb->m_cWnd.Get() < before)
        {
            m_lastCut = Simulator::Now();
        }
        int64_t nowMs = Simulator::Now().GetMilliSeconds();
        if (nowMs > tcb->m_rcvTimestampEchoReply)
        {
            m_inference = MilliSeconds(3 * (nowMs - tcb->m_rcvTimestampEchoReply));
        }
    }

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        if (g_gateGrowth && m_lastCut.IsStrictlyPositive() &&
            Simulator::Now() - m_lastCut < m_inference)
        {
            return;
        }
        if (g_exitNoGrowth && m_exitingRecovery)
        {
            m_exitingRecovery = false;
            if (g_ledbatLog.is_open())
            {
                Log('S', tcb, segmentsAcked, tcb->m_cWnd.Get()); // skipped
            }
            return;
        }
        SequenceNumber32 acked = tcb->m_lastAckedSeq;
        uint32_t before = tcb->m_cWnd.Get();
        tcb->m_lastAckedSeq = acked - g_allowedIncrease * tcb->m_segmentSize;
        Base::IncreaseWindow(tcb, segmentsAcked);
        if (g_ledbatLog.is_open())
        {
            Log('I', tcb, segmentsAcked, before);
        }
        tcb->m_lastAckedSeq = acked;
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        if (g_ledbatHalveCwnd)
        {
            UintegerValue minCwnd;
            this->GetAttribute("MinCwnd", minCwnd);
            auto minBytes = static_cast<uint32_t>(minCwnd.Get()) * tcb->m_segmentSize;
            return std::max(minBytes, tcb->m_cWnd.Get() / 2);
        }
        return Base::GetSsThresh(tcb, bytesInFlight);
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<LpProbe<Base>>(this);
    }

  private:
    // --ledbat-log: what the controller was given and what it did, one line per call: time (ns),
    // flow, call (P = PktsAcked, I = IncreaseWindow, S = IncreaseWindow skipped by
    // --exit-no-growth), congestion state, segments acked, the timestamps it reads (TSval as
    // passed, TSecr), cwnd before and after, ssthresh after, and the flight TcpLedbat's cap uses
    // (m_highTxMark - m_lastAckedSeq, the allowance included). OnCwnd adds W lines (every change
    // of a low-priority flow's window, from the CongestionWindow trace).
    void Log(char call, Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, uint32_t cwndBefore) const
    {
        g_ledbatLog << Simulator::Now().GetNanoSeconds() << ',' << g_rxFlow << ',' << call << ','
                    << TcpSocketState::TcpCongStateName[tcb->m_congState] << ',' << segmentsAcked << ','
                    << tcb->m_rcvTimestampValue << ',' << tcb->m_rcvTimestampEchoReply << ','
                    << cwndBefore << ',' << tcb->m_cWnd.Get() << ',' << tcb->m_ssThresh.Get() << ','
                    << (tcb->m_highTxMark.Get() - tcb->m_lastAckedSeq) << ','
                    << tcb->m_bytesInFlight.Get() << '\n';
    }

    Time m_lastCut{0};
    Time m_inference{0};
    bool m_exitingRecovery{false}; // the last PktsAcked was made in CA_RECOVERY
};

template <>
TypeId
LpProbe<TcpLp>::GetTypeId()
{
    static TypeId tid = TypeId("TcpLpProbe")
                            .SetParent<TcpLp>()
                            .SetGroupName("Internet")
                            .AddConstructor<LpProbe<TcpLp>>();
    return tid;
}

template <>
TypeId
LpProbe<TcpLedbat>::GetTypeId()
{
    static TypeId tid = TypeId("TcpLedbatProbe")
                            .SetParent<TcpLedbat>()
                            .SetGroupName("Internet")
                            .AddConstructor<LpProbe<TcpLedbat>>();
    return tid;
}

// ---------------------------------------------------------------- bottleneck bookkeeping

struct Backlog
{
    uint32_t qdiscPkts = 0;
    uint32_t devPkts = 0;
    int64_t lastNs = 0;
    double areaPktNs = 0;    // integral of (qdisc + device queue) packets
    double areaQdiscNs = 0;  // integral of the qdisc's packets alone
    uint64_t txBytes = 0;    // IP bytes that started transmission
    uint64_t txPkts = 0;
    std::map<std::string, uint32_t> drops;

    void Advance()
    {
        int64_t now = Simulator::Now().GetNanoSeconds();
        areaPktNs += double(qdiscPkts + devPkts) * double(now - lastNs);
        areaQdiscNs += double(qdiscPkts) * double(now - lastNs);
        lastNs = now;
    }
};

Backlog g_bn;
const uint32_t kPppHeader = 2; // the point-to-point header ns-3 serialises with every packet

void
OnQdiscPkts(uint32_t /*old*/, uint32_t now)
{
    g_bn.Advance();
    g_bn.qdiscPkts = now;
}

void
OnDevPkts(uint32_t /*old*/, uint32_t now)
{
    g_bn.Advance();
    g_bn.devPkts = now;
}

void
OnPhyTxBegin(Ptr<const Packet> p)
{
    g_bn.txBytes += p->GetSize() - kPppHeader;
    g_bn.txPkts++;
}

void
OnDrop(Ptr<const QueueDiscItem> /*item*/, const char* reason)
{
    g_bn.drops[reason]++;
}

void
OnDropAfter(Ptr<const QueueDiscItem> /*item*/, const char* reason)
{
    g_bn.drops[std::string(reason) + " (after dequeue)"]++;
}

// ---------------------------------------------------------------- flows

struct Flow
{
    std::string cls; // "be" or "lp"
    uint16_t port;
    Ptr<BulkSendApplication> app;
    Ptr<PacketSink> sink;
    uint32_t recoveries = 0;
    uint32_t rtos = 0;
    // low-priority diagnostics: window cuts made by the controller itself (in CA_OPEN; cutsHalf
    // = to more than one segment, TCP-LP's halving or any LEDBAT decrease; cutsToOne = to one
    // segment) and the one-way delay samples TSval - TSecr (ms) the sender sees, on new and on
    // duplicate ACKs
    uint32_t cutsHalf = 0;
    uint32_t cutsToOne = 0;
    TcpSocketState::TcpCongState_t state = TcpSocketState::CA_OPEN;
    uint32_t highAck = 0;
    uint64_t owdNewSum = 0;
    uint64_t owdNewN = 0;
    uint64_t owdDupSum = 0;
    uint64_t owdDupN = 0;
    uint32_t owdDupMax = 0;
    uint32_t owdNewMin = UINT32_MAX;
    uint32_t owdNewMax = 0;
    double cwndArea = 0; // integral of cwnd (bytes x s)
    double cwndLastS = 0;
    uint32_t cwnd = 0;
};

std::vector<Flow> g_flows;
uint32_t g_segSize = 1000;

void
OnCongState(uint32_t id, TcpSocketState::TcpCongState_t /*old*/, TcpSocketState::TcpCongState_t now)
{
    Flow& f = g_flows[id];
    f.state = now;
    if (now == TcpSocketState::CA_RECOVERY)
    {
        f.recoveries++;
    }
    else if (now == TcpSocketState::CA_LOSS)
    {
        f.rtos++;
    }
}

void
OnCwnd(uint32_t id, uint32_t old, uint32_t now)
{
    Flow& f = g_flows[id];
    double t = Simulator::Now().GetSeconds();
    if (g_ledbatLog.is_open() && f.cls == "lp")
    {
        g_ledbatLog << Simulator::Now().GetNanoSeconds() << ',' << id << ",W,"
                    << TcpSocketState::TcpCongStateName[f.state] << ",0,0,0," << old << ',' << now
                    << ",0,0,0\n";
    }
    f.cwndArea += double(f.cwnd) * (t - f.cwndLastS);
    f.cwndLastS = t;
    f.cwnd = now;
    // a cut outside loss recovery is the controller's own (TCP-LP's early indication)
    if (now < old && f.state == TcpSocketState::CA_OPEN)
    {
        if (now <= g_segSize)
        {
            f.cutsToOne++;
        }
        else
        {
            f.cutsHalf++;
        }
    }
}

void
OnRx(uint32_t id, Ptr<const Packet> /*p*/, const TcpHeader& h, Ptr<const TcpSocketBase> /*s*/)
{
    Flow& f = g_flows[id];
    if (!(h.GetFlags() & TcpHeader::ACK))
    {
        return;
    }
    uint32_t ack = h.GetAckNumber().GetValue();
    bool dup = ack <= f.highAck;
    g_ackIsDup = dup;
    g_rxFlow = id;
    f.highAck = std::max(f.highAck, ack);
    if (!h.HasOption(TcpOption::TS))
    {
        return;
    }
    auto ts = DynamicCast<const TcpOptionTS>(h.GetOption(TcpOption::TS));
    if (ts->GetEcho() == 0)
    {
        return;
    }
    uint32_t owd = ts->GetTimestamp() - ts->GetEcho();
    if (dup)
    {
        f.owdDupSum += owd;
        f.owdDupN++;
        f.owdDupMax = std::max(f.owdDupMax, owd);
    }
    else
    {
        f.owdNewSum += owd;
        f.owdNewN++;
        f.owdNewMin = std::min(f.owdNewMin, owd);
        f.owdNewMax = std::max(f.owdNewMax, owd);
    }
}

void
Hook(uint32_t id)
{
    Flow& f = g_flows[id];
    Ptr<Socket> s = f.app->GetSocket();
    NS_ABORT_MSG_IF(!s, "flow " << id << " has no socket at its start");
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, id));
    s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, id));
    s->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, id));
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string lpcc = "ledbat";
    std::string qdisc = "pfifo";
    uint32_t seed = 1;
    uint32_t nBe = 5;
    uint32_t nLp = 5;
    std::string rateStr = "4Mbps";
    uint32_t limitPkts = 400;
    std::string rttStr = "50ms";
    double durationS = 60;
    double startJitterS = 0;
    uint32_t segSize = 1000;
    uint32_t iw = 2;
    uint32_t delAckCount = 2;
    std::string delAckTimeout = "100ms";
    bool sack = false;
    std::string minRto = "200ms";
    std::string initialRto = "3s";
    std::string recovery = "ns3::TcpClassicRecovery";
    // TcpLedbat: aqmlab's LEDBAT defaults (the study's TCP-LEDBAT: slow start off, 100 ms)
    std::string ledbatTarget = "100ms";
    double ledbatGain = 1.0;
    bool ledbatSs = false;
    uint32_t ledbatFilter = 4;
    uint32_t ledbatHistory = 10;
    uint32_t ledbatMinCwnd = 2;
    uint32_t mtu = 1600;

    CommandLine cmd(__FILE__);
    cmd.AddValue("lpcc", "low-priority controller: ledbat|tcp_lp|newreno", lpcc);
    cmd.AddValue("newack", "low-priority flows: no delay samples on duplicate ACKs", g_skipDupSamples);
    cmd.AddValue("lp-gate", "TcpLp: no growth (slow start too) within the inference time", g_gateGrowth);
    cmd.AddValue("ledbat-allowed-increase", "TcpLedbat: add RFC 6817's ALLOWED_INCREASE (segments) to the flight cap",
                 g_allowedIncrease);
    cmd.AddValue("exit-no-growth",
                 "low-priority flows: no window growth on the full ACK that ends fast recovery",
                 g_exitNoGrowth);
    std::string ledbatLog;
    cmd.AddValue("nr-outstanding-ssthresh",
                 "NewReno flows: ssthresh = half the data outstanding, limited-transmit "
                 "segments included (aqmlab's NewReno)",
                 g_nrOutstanding);
    cmd.AddValue("ledbat-halve-cwnd",
                 "TcpLedbat: ssthresh = max(MinCwnd, cwnd / 2) on loss (RFC 6817 2.4.2; "
                 "aqmlab's ledbat)",
                 g_ledbatHalveCwnd);
    cmd.AddValue("ledbat-log",
                 "low-priority flows: write every PktsAcked / IncreaseWindow call and cwnd change to this CSV",
                 ledbatLog);
    cmd.AddValue("ts-offset-ms", "low-priority flows: receiver's timestamp clock ahead by this", g_tsOffsetMs);
    cmd.AddValue("qdisc", "pfifo|red|codel|fq_codel", qdisc);
    cmd.AddValue("seed", "run number (RngRun)", seed);
    cmd.AddValue("nbe", "best-effort NewReno flows", nBe);
    cmd.AddValue("nlp", "low-priority flows", nLp);
    cmd.AddValue("rate", "bottleneck rate (both directions)", rateStr);
    cmd.AddValue("limit", "bottleneck qdisc limit in packets (and the ACK direction's)", limitPkts);
    cmd.AddValue("rtt", "base round-trip time", rttStr);
    cmd.AddValue("duration", "run length (s)", durationS);
    cmd.AddValue("jitter", "flow start times uniform in [0, jitter] s (0: all at t = 0)", startJitterS);
    cmd.AddValue("segsize", "TCP segment size (payload bytes)", segSize);
    cmd.AddValue("iw", "initial window (segments)", iw);
    cmd.AddValue("delack", "DelAckCount (1: no delayed ACKs)", delAckCount);
    cmd.AddValue("delack-timeout", "DelAckTimeout", delAckTimeout);
    cmd.AddValue("sack", "SACK on both ends", sack);
    cmd.AddValue("minrto", "MinRto", minRto);
    cmd.AddValue("initial-rto", "RttEstimator::InitialEstimation", initialRto);
    cmd.AddValue("recovery", "loss recovery TypeId", recovery);
    cmd.AddValue("ledbat-target", "TcpLedbat::TargetDelay", ledbatTarget);
    cmd.AddValue("ledbat-gain", "TcpLedbat::Gain", ledbatGain);
    cmd.AddValue("ledbat-ss", "TcpLedbat::SSParam (slow start)", ledbatSs);
    cmd.AddValue("ledbat-filter", "TcpLedbat::NoiseFilterLen", ledbatFilter);
    cmd.AddValue("ledbat-history", "TcpLedbat::BaseHistoryLen", ledbatHistory);
    cmd.AddValue("ledbat-mincwnd", "TcpLedbat::MinCwnd (segments)", ledbatMinCwnd);
    cmd.Parse(argc, argv);
    g_segSize = segSize;

    LpProbe<TcpLp>::GetTypeId(); // registers the variants' TypeIds
    LpProbe<TcpLedbat>::GetTypeId();
    TcpNewRenoOutstanding::GetTypeId();
    NS_ABORT_MSG_IF(g_ledbatHalveCwnd && lpcc != "ledbat",
                    "--ledbat-halve-cwnd needs --lpcc=ledbat");
    std::string nrType = g_nrOutstanding ? "TcpNewRenoOutstanding" : "ns3::TcpNewReno";
    if (!ledbatLog.empty())
    {
        g_ledbatLog.open(ledbatLog);
        NS_ABORT_MSG_IF(!g_ledbatLog, "cannot write " << ledbatLog);
        g_ledbatLog << "t_ns,flow,call,state,segs,tsval,tsecr,cwnd_before,cwnd_after,ssthresh,flight,"
                       "bytes_in_flight\n";
    }
    bool probe = g_skipDupSamples || g_tsOffsetMs > 0 || g_gateGrowth || g_allowedIncrease > 0 ||
                 g_exitNoGrowth || g_ledbatHalveCwnd || !ledbatLog.empty();
    std::string lpType;
    if (lpcc == "ledbat")
    {
        lpType = probe ? "TcpLedbatProbe" : "ns3::TcpLedbat";
    }
    else if (lpcc == "tcp_lp")
    {
        lpType = probe ? "TcpLpProbe" : "ns3::TcpLp";
    }
    else if (lpcc == "newreno")
    {
        lpType = nrType;
    }
    else
    {
        NS_ABORT_MSG("lpcc: " << lpcc << "; allowed: ledbat, tcp_lp, newreno");
    }

    RngSeedManager::SetSeed(2013);
    RngSeedManager::SetRun(seed);

    Time rtt(rttStr);
    Time quarter = rtt / 4;
    DataRate rate(rateStr);

    // ---------------------------------------------------------------- TCP (aqmlab's ns2_sack1 NewReno)
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", StringValue(recovery));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segSize));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(iw));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAckCount));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(Time(delAckTimeout)));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(3)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 26));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 26));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    // TcpLedbat and TcpLp take their delay samples from the timestamp option (ms clock)
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Time(minRto)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(10)));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(Time(initialRto)));
    Config::SetDefault("ns3::TcpLedbat::TargetDelay", TimeValue(Time(ledbatTarget)));
    Config::SetDefault("ns3::TcpLedbat::Gain", DoubleValue(ledbatGain));
    Config::SetDefault("ns3::TcpLedbat::SSParam", StringValue(ledbatSs ? "yes" : "no"));
    Config::SetDefault("ns3::TcpLedbat::NoiseFilterLen", UintegerValue(ledbatFilter));
    Config::SetDefault("ns3::TcpLedbat::BaseHistoryLen", UintegerValue(ledbatHistory));
    Config::SetDefault("ns3::TcpLedbat::MinCwnd", UintegerValue(ledbatMinCwnd));

    // ---------------------------------------------------------------- topology
    NodeContainer nodes;
    nodes.Create(4); // 0 be sender, 1 lp sender, 2 A (bottleneck router), 3 receiver
    InternetStackHelper stack;
    stack.Install(nodes);
    nodes.Get(0)->GetObject<TcpL4Protocol>()->SetAttribute(
        "SocketType", TypeIdValue(TypeId::LookupByName(nrType)));
    nodes.Get(1)->GetObject<TcpL4Protocol>()->SetAttribute("SocketType",
                                                           TypeIdValue(TypeId::LookupByName(lpType)));

    PointToPointHelper fast;
    fast.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
    fast.SetChannelAttribute("Delay", TimeValue(quarter));
    fast.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    NetDeviceContainer dBe = fast.Install(nodes.Get(0), nodes.Get(2));
    NetDeviceContainer dLp = fast.Install(nodes.Get(1), nodes.Get(2));

    PointToPointHelper slow;
    slow.SetDeviceAttribute("DataRate", DataRateValue(rate));
    slow.SetChannelAttribute("Delay", TimeValue(quarter));
    slow.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    // one packet of device queue below the qdisc (the least ns-3 allows)
    slow.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
    NetDeviceContainer dSlow = slow.Install(nodes.Get(2), nodes.Get(3));

    std::ostringstream qcfg;
    TrafficControlHelper tch;
    std::string lim = std::to_string(limitPkts) + "p";
    if (qdisc == "pfifo")
    {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(lim));
        qcfg << "{\"type\": \"ns3::FifoQueueDisc\", \"MaxSize\": " << Q(lim) << "}";
    }
    else if (qdisc == "red")
    {
        // aqmlab's "red" preset = ns-2's automatic RED (queue/red.rs): C = rate / (8 x 1500 B),
        // min_th = max(5, 5 ms x C / 2), max_th = 3 min_th, w_q = 1 - exp(-1 / (10 RTT C)) with
        // RTT = max(0.1 s, 3 (link delay + 1 / C)), max_p 0.1, gentle, wait, packet mode.
        double c = rate.GetBitRate() / (8.0 * 1500);
        double minTh = std::max(5.0, 0.005 * c / 2);
        double maxTh = 3 * minTh;
        double rttRed = std::max(0.1, 3 * (quarter.GetSeconds() + 1 / c));
        double qw = 1 - std::exp(-1 / (10 * rttRed * c));
        tch.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MaxSize", StringValue(lim),
                             "MinTh", DoubleValue(minTh),
                             "MaxTh", DoubleValue(maxTh),
                             "QW", DoubleValue(qw),
                             "LInterm", DoubleValue(10),
                             "Gentle", BooleanValue(true),
                             "Wait", BooleanValue(true),
                             "MeanPktSize", UintegerValue(1500),
                             "LinkBandwidth", DataRateValue(rate),
                             "LinkDelay", TimeValue(quarter),
                             "UseEcn", BooleanValue(false),
                             "ARED", BooleanValue(false));
        qcfg << "{\"type\": \"ns3::RedQueueDisc\", \"MaxSize\": " << Q(lim) << ", \"MinTh\": "
             << Num(minTh) << ", \"MaxTh\": " << Num(maxTh) << ", \"QW\": " << Num(qw)
             << ", \"LInterm\": 10, \"Gentle\": true, \"Wait\": true, \"MeanPktSize\": 1500, "
                "\"UseEcn\": false, \"ARED\": false}";
    }
    else if (qdisc == "codel")
    {
        tch.SetRootQueueDisc("ns3::CoDelQueueDisc", "MaxSize", StringValue(lim), "Target",
                             StringValue("5ms"), "Interval", StringValue("100ms"));
        qcfg << "{\"type\": \"ns3::CoDelQueueDisc\", \"MaxSize\": " << Q(lim)
             << ", \"Target\": \"5ms\", \"Interval\": \"100ms\", \"MinBytes\": 1500}";
    }
    else if (qdisc == "fq_codel")
    {
        tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc", "MaxSize", StringValue(lim), "Target",
                             StringValue("5ms"), "Interval", StringValue("100ms"));
        qcfg << "{\"type\": \"ns3::FqCoDelQueueDisc\", \"MaxSize\": " << Q(lim)
             << ", \"Target\": \"5ms\", \"Interval\": \"100ms\", \"Flows\": 1024, "
                "\"DropBatchSize\": 64, \"Quantum\": \"device MTU (default)\"}";
    }
    else
    {
        NS_ABORT_MSG("qdisc: " << qdisc << "; allowed: pfifo, red, codel, fq_codel");
    }
    Ptr<QueueDisc> bq = tch.Install(dSlow.Get(0)).Get(0);

    TrafficControlHelper ackTc; // the ACK direction: a FIFO of the same limit
    ackTc.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(lim));
    ackTc.Install(dSlow.Get(1));

    Ipv4AddressHelper addr;
    addr.SetBase("10.1.1.0", "255.255.255.0");
    addr.Assign(dBe);
    addr.SetBase("10.1.3.0", "255.255.255.0");
    addr.Assign(dLp);
    addr.SetBase("10.1.2.0", "255.255.255.0");
    Ipv4InterfaceContainer iSlow = addr.Assign(dSlow);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    bq->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&OnQdiscPkts));
    bq->TraceConnectWithoutContext("DropBeforeEnqueue", MakeCallback(&OnDrop));
    bq->TraceConnectWithoutContext("DropAfterDequeue", MakeCallback(&OnDropAfter));
    Ptr<PointToPointNetDevice> dev = DynamicCast<PointToPointNetDevice>(dSlow.Get(0));
    dev->GetQueue()->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&OnDevPkts));
    dev->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&OnPhyTxBegin));

    // ---------------------------------------------------------------- workload
    Ptr<UniformRandomVariable> jitter = CreateObject<UniformRandomVariable>();
    jitter->SetAttribute("Min", DoubleValue(0));
    jitter->SetAttribute("Max", DoubleValue(startJitterS));
    jitter->SetStream(1);
    std::vector<double> starts;
    uint16_t port = 5000;
    for (uint32_t k = 0; k < nBe + nLp; k++)
    {
        Flow f;
        f.cls = k < nBe ? "be" : "lp";
        f.port = port++;
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), f.port));
        ApplicationContainer s = sinkHelper.Install(nodes.Get(3));
        s.Start(Seconds(0));
        f.sink = DynamicCast<PacketSink>(s.Get(0));
        BulkSendHelper bs("ns3::TcpSocketFactory", InetSocketAddress(iSlow.GetAddress(1), f.port));
        bs.SetAttribute("MaxBytes", UintegerValue(0));
        bs.SetAttribute("SendSize", UintegerValue(segSize));
        ApplicationContainer a = bs.Install(nodes.Get(k < nBe ? 0 : 1));
        double st = startJitterS > 0 ? jitter->GetValue() : 0.0;
        starts.push_back(st);
        a.Start(Seconds(st));
        f.app = DynamicCast<BulkSendApplication>(a.Get(0));
        g_flows.push_back(f);
    }
    for (uint32_t id = 0; id < g_flows.size(); id++)
    {
        Simulator::Schedule(Seconds(starts[id]) + NanoSeconds(1), &Hook, id);
    }

    Simulator::Stop(Seconds(durationS));
    Simulator::Run();
    g_bn.Advance();
    double endS = Simulator::Now().GetSeconds();

    // ---------------------------------------------------------------- output
    uint64_t be = 0;
    uint64_t all = 0;
    for (const Flow& f : g_flows)
    {
        all += f.sink->GetTotalRx();
        be += f.cls == "be" ? f.sink->GetTotalRx() : 0;
    }
    double eq = g_bn.areaPktNs / (endS * 1e9);
    double eqQdisc = g_bn.areaQdiscNs / (endS * 1e9);
    double capBytes = rate.GetBitRate() * endS / 8;

    std::ostringstream o;
    o << "{\"program\": \"lpcc2013-ns3\", \"ns3_version\": \"3.44\"";
    o << ", \"lpcc\": " << Q(lpcc) << ", \"lp_type\": " << Q(lpType) << ", \"qdisc\": " << Q(qdisc)
      << ", \"seed\": " << seed;
    o << ", \"settings\": {\"rate\": " << Q(rateStr) << ", \"rtt\": " << Q(rttStr)
      << ", \"limit_pkts\": " << limitPkts << ", \"duration_s\": " << Num(durationS)
      << ", \"n_be\": " << nBe << ", \"n_lp\": " << nLp << ", \"start_jitter_s\": " << Num(startJitterS)
      << ", \"topology\": \"senders -10Gbps,rtt/4- A -rate,rtt/4- receiver; ACKs back over rate "
         "(FifoQueueDisc, same limit) and 10Gbps\""
      << ", \"device_mtu\": " << mtu << ", \"device_queue\": \"DropTailQueue 1p\""
      << ", \"bottleneck_qdisc\": " << qcfg.str() << ", \"tcp\": {\"be\": " << Q(nrType) << ", \"lp\": "
      << Q(lpType) << ", \"RecoveryType\": " << Q(recovery) << ", \"SegmentSize\": " << segSize
      << ", \"InitialCwnd\": " << iw << ", \"DelAckCount\": " << delAckCount
      << ", \"DelAckTimeout\": " << Q(delAckTimeout) << ", \"Sack\": " << B(sack)
      << ", \"Timestamp\": true, \"WindowScaling\": true, \"SndBufSize\": 67108864, "
         "\"RcvBufSize\": 67108864, \"MinRto\": "
      << Q(minRto) << ", \"ClockGranularity\": \"10ms\", \"RttEstimator::InitialEstimation\": "
      << Q(initialRto) << "}";
    if (lpcc == "ledbat")
    {
        o << ", \"ledbat\": {\"TargetDelay\": " << Q(ledbatTarget) << ", \"Gain\": " << Num(ledbatGain)
          << ", \"SSParam\": " << Q(ledbatSs ? "yes" : "no") << ", \"NoiseFilterLen\": " << ledbatFilter
          << ", \"BaseHistoryLen\": " << ledbatHistory << ", \"MinCwnd\": " << ledbatMinCwnd << "}";
    }
    o << ", \"newack\": " << B(g_skipDupSamples) << ", \"ts_offset_ms\": " << g_tsOffsetMs << ", \"lp_gate\": " << B(g_gateGrowth)
      << ", \"ledbat_allowed_increase\": " << g_allowedIncrease
      << ", \"exit_no_growth\": " << B(g_exitNoGrowth)
      << ", \"nr_outstanding_ssthresh\": " << B(g_nrOutstanding)
      << ", \"ledbat_halve_cwnd\": " << B(g_ledbatHalveCwnd)
      << ", \"rng\": {\"seed\": 2013, \"run\": " << seed << "}}";
    o << ", \"end_s\": " << Num(endS);
    o << ", \"utilization\": " << Num(g_bn.txBytes / capBytes);
    o << ", \"eq_pkts\": " << Num(eq) << ", \"eq_over_qmax\": " << Num(eq / limitPkts)
      << ", \"eq_qdisc_pkts\": " << Num(eqQdisc);
    o << ", \"mean_queue_ms\": " << Num(eq * (segSize + 52) * 8 / rate.GetBitRate() * 1e3);
    o << ", \"tcp_share_pct\": " << Num(all ? 100.0 * be / all : -1);
    o << ", \"tx_pkts\": " << g_bn.txPkts << ", \"drops\": {";
    bool first = true;
    for (const auto& [r, c] : g_bn.drops)
    {
        o << (first ? "" : ", ") << Q(r) << ": " << c;
        first = false;
    }
    o << "}, \"flows\": [";
    for (size_t i = 0; i < g_flows.size(); i++)
    {
        Flow& f = g_flows[i];
        f.cwndArea += double(f.cwnd) * (endS - f.cwndLastS);
        o << (i ? ", " : "") << "{\"class\": " << Q(f.cls) << ", \"rx_bytes\": " << f.sink->GetTotalRx()
          << ", \"recoveries\": " << f.recoveries << ", \"rtos\": " << f.rtos
          << ", \"cuts_half\": " << f.cutsHalf << ", \"cuts_to_one\": " << f.cutsToOne
          << ", \"mean_cwnd_segs\": " << Num(f.cwndArea / endS / segSize)
          << ", \"owd_new_mean_ms\": " << Num(f.owdNewN ? double(f.owdNewSum) / f.owdNewN : -1)
          << ", \"owd_new_min_ms\": " << (f.owdNewN ? f.owdNewMin : 0)
          << ", \"owd_new_max_ms\": " << f.owdNewMax << ", \"owd_new_n\": " << f.owdNewN
          << ", \"owd_dup_mean_ms\": " << Num(f.owdDupN ? double(f.owdDupSum) / f.owdDupN : -1)
          << ", \"owd_dup_max_ms\": " << f.owdDupMax << ", \"owd_dup_n\": " << f.owdDupN << "}";
    }
    o << "]}";
    std::cout << o.str() << std::endl;
    Simulator::Destroy();
    return 0;
}
