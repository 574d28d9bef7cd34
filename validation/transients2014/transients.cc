// transients2014 in ns-3 3.44: two groups of N TCP flows (360 KB per group) start their slow
// starts over a 2 Mb/s bottleneck; group 2 starts a uniform 0..0.65 s after group 1.
// One run per invocation; prints one JSON object (every setting plus the per-run metrics).
//
// Path (the same split as aqmlab's transients2014 scenario):
//   sender --(10 Gb/s, rtt/4)--> A [qdisc under test] --(2 Mb/s, rtt/4)--> receiver
//   receiver [pfifo 100p] --(2 Mb/s, rtt/4)--> A --(10 Gb/s, rtt/4)--> sender
// rtt = 162 ms (11 ms series) or 342 ms (101 ms series).
//
// Queueing delay of a packet = time from its enqueue into the bottleneck qdisc to the start of
// its transmission on the 2 Mb/s link (PhyTxBegin), i.e. it includes the wait in ns-3's
// one-packet device queue below the qdisc. The qdisc's own sojourn (enqueue to qdisc dequeue,
// what the AQM sees) is recorded separately.
//
// Usage: transients --qdisc=codel --n=1 --seed=1 --rtt=162ms [--bytes=360000] [--trace=ID] [--trace-backlog]

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include "../ns3_json.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

using namespace ns3;
using json::B;
using json::Num;
using json::OptNum;
using json::Q;

namespace
{

// ---------------------------------------------------------------- a TCP variant (experiment)

// TcpNewReno with ns-2's ssthresh rule: half the congestion window (ns-2 TcpAgent::slowdown with
// CLOSE_SSTHRESH_HALF halves cwnd_), where ns-3's TcpNewReno halves the bytes in flight (RFC 5681
// FlightSize; after an RTO in recovery, ns-3's flight excludes SACKed and lost-marked data and is
// often tiny, so ssthresh falls to 2 segments). Used with --tcp=TcpNewRenoCwndHalf.
class TcpNewRenoCwndHalf : public TcpNewReno
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("TcpNewRenoCwndHalf")
                                .SetParent<TcpNewReno>()
                                .SetGroupName("Internet")
                                .AddConstructor<TcpNewRenoCwndHalf>();
        return tid;
    }

    TcpNewRenoCwndHalf() = default;

    TcpNewRenoCwndHalf(const TcpNewRenoCwndHalf& other) = default;

    std::string GetName() const override
    {
        return "TcpNewRenoCwndHalf";
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t /*bytesInFlight*/) override
    {
        return std::max(2 * tcb->m_segmentSize, tcb->m_cWnd.Get() / 2);
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpNewRenoCwndHalf>(this);
    }
};

NS_OBJECT_ENSURE_REGISTERED(TcpNewRenoCwndHalf);

// ---------------------------------------------------------------- per-flow trace

uint32_t g_segSize = 1460;

// --trace=ID: one line per event of flow ID on stderr (time s, event, fields), to follow a
// single timeout: transmissions, ACKs with their SACK blocks, bottleneck drops, cwnd and state
// changes, the RTO value.
int g_trace = -1;
bool g_traceBacklog = false; // --trace-backlog: "<time s> backlog <packets>" at every change
uint16_t g_tracePort = 0; // the traced flow's local (sender) port

void
TraceLine(const std::string& what)
{
    std::cerr << std::fixed << std::setprecision(6) << Simulator::Now().GetSeconds() << " "
              << what << "\n";
}

uint32_t
SegOf(uint32_t seq)
{
    return seq == 0 ? 0 : (seq - 1) / g_segSize; // data bytes start at 1 (ISN 0)
}

void
TraceDrop(Ptr<const QueueDiscItem> item, const char* reason)
{
    if (g_trace < 0)
    {
        return;
    }
    TcpHeader th;
    if (item->GetPacket()->PeekHeader(th) && th.GetSourcePort() == g_tracePort)
    {
        TraceLine("drop " + std::to_string(SegOf(th.GetSequenceNumber().GetValue())) + " " +
                  reason);
    }
}

// ---------------------------------------------------------------- bottleneck bookkeeping

struct Pending
{
    int64_t tEnqNs;
    int64_t tDeqNs; // -1 while still inside the qdisc
    uint32_t size;
};

struct SpikeTracker
{
    double thresholdBytes = 0;
    bool above = false;
    int64_t start = 0;
    int64_t lastEnd = -1; // where the last run above ended (a dip of zero length is no break)
    int64_t lastStart = 0;
    int64_t best = 0;

    void Update(int64_t now, double backlog)
    {
        bool nowAbove = backlog > thresholdBytes;
        if (nowAbove && !above)
        {
            // resume the previous run when it ended at this very instant
            start = (lastEnd == now) ? lastStart : now;
            above = true;
        }
        else if (!nowAbove && above)
        {
            best = std::max(best, now - start);
            lastEnd = now;
            lastStart = start;
            above = false;
        }
    }

    void Finish(int64_t now)
    {
        if (above)
        {
            best = std::max(best, now - start);
        }
    }
};

struct Bottleneck
{
    // packet uid -> enqueue records, oldest first. A TCP retransmission is cut from the same
    // buffered packet as the original and so carries the same uid; when it is queued while the
    // original still is (go-back-N after a timeout), both copies sit here, in FIFO order.
    std::unordered_map<uint64_t, std::deque<Pending>> pending;
    size_t nPending = 0;
    double backlogBytes = 0;
    uint32_t backlogPkts = 0;
    uint32_t maxBacklogPkts = 0;
    SpikeTracker spike60;
    SpikeTracker spike100;
    std::vector<int64_t> delays;        // enqueue -> start of transmission, ns
    int64_t maxDelayNs = -1;
    int64_t maxDelayEnqNs = -1; // enqueue time of the packet with the largest delay
    std::vector<int64_t> qdiscSojourns; // enqueue -> qdisc dequeue, ns
    std::map<std::string, uint32_t> dropReasons;
    uint64_t enqueued = 0;
    uint64_t txUnknown = 0;   // transmissions without an enqueue record (should stay 0)
    uint64_t dropUnknown = 0; // drops from the queue without an enqueue record (should stay 0)

    void Changed()
    {
        int64_t now = Simulator::Now().GetNanoSeconds();
        spike60.Update(now, backlogBytes);
        spike100.Update(now, backlogBytes);
        maxBacklogPkts = std::max(maxBacklogPkts, backlogPkts);
        if (g_traceBacklog)
        {
            TraceLine("backlog " + std::to_string(backlogPkts));
        }
    }

    // removes the oldest record of uid; false when there is none
    bool Pop(uint64_t uid, Pending* out)
    {
        auto it = pending.find(uid);
        if (it == pending.end())
        {
            return false;
        }
        *out = it->second.front();
        it->second.pop_front();
        if (it->second.empty())
        {
            pending.erase(it);
        }
        nPending--;
        backlogBytes -= out->size;
        backlogPkts--;
        Changed();
        return true;
    }
};

Bottleneck g_bn;

void
OnEnqueue(Ptr<const QueueDiscItem> item)
{
    uint64_t uid = item->GetPacket()->GetUid();
    g_bn.enqueued++;
    g_bn.pending[uid].push_back({Simulator::Now().GetNanoSeconds(), -1, item->GetSize()});
    g_bn.nPending++;
    g_bn.backlogBytes += item->GetSize();
    g_bn.backlogPkts++;
    g_bn.Changed();
}

void
OnDequeue(Ptr<const QueueDiscItem> item)
{
    auto it = g_bn.pending.find(item->GetPacket()->GetUid());
    if (it == g_bn.pending.end())
    {
        return;
    }
    for (Pending& p : it->second)
    {
        if (p.tDeqNs < 0)
        {
            p.tDeqNs = Simulator::Now().GetNanoSeconds();
            break;
        }
    }
}

// refused at the door (AQM early drop or full buffer): it was never in the queue
void
OnDropBeforeEnqueue(Ptr<const QueueDiscItem> item, const char* reason)
{
    g_bn.dropReasons[reason]++;
    TraceDrop(item, reason);
}

// dropped from the queue (CoDel's head drop, FQ-CoDel's overflow from the fattest flow)
void
OnDropAfterDequeue(Ptr<const QueueDiscItem> item, const char* reason)
{
    g_bn.dropReasons[reason]++;
    TraceDrop(item, reason);
    Pending rec;
    if (!g_bn.Pop(item->GetPacket()->GetUid(), &rec))
    {
        g_bn.dropUnknown++;
    }
}

void
OnPhyTxBegin(Ptr<const Packet> p)
{
    int64_t now = Simulator::Now().GetNanoSeconds();
    Pending rec;
    if (!g_bn.Pop(p->GetUid(), &rec))
    {
        g_bn.txUnknown++;
        return;
    }
    if (now - rec.tEnqNs > g_bn.maxDelayNs)
    {
        g_bn.maxDelayNs = now - rec.tEnqNs;
        g_bn.maxDelayEnqNs = rec.tEnqNs;
    }
    g_bn.delays.push_back(now - rec.tEnqNs);
    int64_t deq = rec.tDeqNs >= 0 ? rec.tDeqNs : now;
    g_bn.qdiscSojourns.push_back(deq - rec.tEnqNs);
}

// ---------------------------------------------------------------- flows

struct Flow
{
    int group;
    uint32_t bytes;
    double startS;
    double firstSynS = -1;
    double completedS = -1;
    uint32_t recoveries = 0; // entries into CA_RECOVERY (fast retransmit)
    uint32_t rtos = 0;       // entries into CA_LOSS (retransmission timeout)
    uint32_t retxBytes = 0;
    uint32_t highestTx = 0;
    uint32_t cwnd = 0;
    uint32_t prevCwnd = 0;
    uint32_t ssthresh = 0;
    std::vector<std::pair<double, double>> rtoLog; // (cwnd before, ssthresh after) in segments
    Ptr<BulkSendApplication> app;
};

std::vector<Flow> g_flows;
uint32_t g_done = 0;

void
OnHighestRxAck(uint32_t id, SequenceNumber32 /*old*/, SequenceNumber32 now)
{
    Flow& f = g_flows[id];
    // ns-3's ISN is 0: data bytes are 1..bytes; the ACK of the last byte acks bytes + 1
    if (f.completedS < 0 && now.GetValue() >= f.bytes + 1)
    {
        f.completedS = Simulator::Now().GetSeconds();
        if (++g_done == g_flows.size())
        {
            Simulator::Stop(Seconds(0.5)); // let the FIN exchange finish
        }
    }
}

void
LogRto(uint32_t id)
{
    Flow& f = g_flows[id];
    double before = (f.cwnd == g_segSize) ? f.prevCwnd : f.cwnd;
    f.rtoLog.emplace_back(before / g_segSize, double(f.ssthresh) / g_segSize);
}

void
OnCwnd(uint32_t id, uint32_t old, uint32_t now)
{
    g_flows[id].prevCwnd = old;
    g_flows[id].cwnd = now;
    if (int(id) == g_trace)
    {
        TraceLine("cwnd " + std::to_string(double(now) / g_segSize));
    }
}

void
OnSsthresh(uint32_t id, uint32_t /*old*/, uint32_t now)
{
    g_flows[id].ssthresh = now;
}

void
OnCongState(uint32_t id, TcpSocketState::TcpCongState_t /*old*/, TcpSocketState::TcpCongState_t now)
{
    if (int(id) == g_trace)
    {
        TraceLine(std::string("state ") + TcpSocketState::TcpCongStateName[now] + " ssthresh " +
                  std::to_string(double(g_flows[id].ssthresh) / g_segSize));
    }
    if (now == TcpSocketState::CA_RECOVERY)
    {
        g_flows[id].recoveries++;
    }
    else if (now == TcpSocketState::CA_LOSS)
    {
        g_flows[id].rtos++;
        Simulator::ScheduleNow(&LogRto, id);
    }
}

void
OnTx(uint32_t id, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> /*s*/)
{
    Flow& f = g_flows[id];
    uint32_t len = p->GetSize();
    if (len == 0)
    {
        return;
    }
    uint32_t seq = h.GetSequenceNumber().GetValue();
    bool retx = seq + len <= f.highestTx + 1;
    if (retx)
    {
        f.retxBytes += len;
    }
    if (int(id) == g_trace)
    {
        TraceLine((retx ? "retx " : "tx ") + std::to_string(SegOf(seq)));
    }
    f.highestTx = std::max(f.highestTx, seq + len - 1);
}

void
OnRx(uint32_t /*id*/, Ptr<const Packet> /*p*/, const TcpHeader& h, Ptr<const TcpSocketBase> /*s*/)
{
    std::ostringstream l;
    l << "ack " << SegOf(h.GetAckNumber().GetValue());
    Ptr<const TcpOptionSack> sack =
        DynamicCast<const TcpOptionSack>(h.GetOption(TcpOption::SACK));
    if (sack)
    {
        for (const auto& [a, b] : sack->GetSackList())
        {
            l << " sack " << SegOf(a.GetValue()) << "-" << SegOf(b.GetValue() - 1);
        }
    }
    TraceLine(l.str());
}

void
OnRto(uint32_t /*id*/, Time /*old*/, Time now)
{
    TraceLine("rto_value " + std::to_string(now.GetSeconds()));
}

void
Hook(uint32_t id)
{
    Flow& f = g_flows[id];
    Ptr<Socket> s = f.app->GetSocket();
    NS_ABORT_MSG_IF(!s, "flow " << id << " has no socket at its start");
    f.firstSynS = f.startS; // StartApplication() connected: the SYN left at the start time
    s->TraceConnectWithoutContext("HighestRxAck", MakeBoundCallback(&OnHighestRxAck, id));
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, id));
    s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, id));
    s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, id));
    s->TraceConnectWithoutContext("SlowStartThreshold", MakeBoundCallback(&OnSsthresh, id));
    if (int(id) == g_trace)
    {
        Address local;
        s->GetSockName(local);
        g_tracePort = InetSocketAddress::ConvertFrom(local).GetPort();
        s->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, id));
        s->TraceConnectWithoutContext("RTO", MakeBoundCallback(&OnRto, id));
        TraceLine("start flow " + std::to_string(id) + " port " + std::to_string(g_tracePort));
    }
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string qdisc = "codel";
    uint32_t n = 1;
    uint32_t seed = 1;
    std::string rttStr = "162ms";
    uint32_t groupBytes = 360000;
    uint32_t segSize = 1460;
    uint32_t limitPkts = 100;
    uint32_t mtu = 1600;
    double maxOffsetS = 0.65;
    double stopS = 120;
    std::string tcpCc = "ns3::TcpNewReno";
    std::string recovery = "ns3::TcpClassicRecovery";
    bool delays = true;

    CommandLine cmd(__FILE__);
    cmd.AddValue("qdisc",
                 "codel|pie|pie_thresh|pie_update|hred|hred_aggressive|sfq_codel|pfifo",
                 qdisc);
    cmd.AddValue("n", "flows per group (N of the N+N load)", n);
    cmd.AddValue("seed", "run number (RngRun); replication r uses seed r", seed);
    cmd.AddValue("rtt", "base round-trip time (162ms or 342ms)", rttStr);
    cmd.AddValue("bytes", "bytes per group, split evenly over its flows", groupBytes);
    cmd.AddValue("segsize", "TCP segment size (bytes of payload)", segSize);
    cmd.AddValue("limit", "bottleneck qdisc limit in packets", limitPkts);
    cmd.AddValue("tcp", "congestion control TypeId", tcpCc);
    cmd.AddValue("recovery", "loss recovery TypeId", recovery);
    cmd.AddValue("delays", "print every packet's queueing delay (ns)", delays);
    cmd.AddValue("trace-backlog", "print the bottleneck backlog (packets) at every change on stderr",
                 g_traceBacklog);
    cmd.AddValue("trace", "print flow ID's events (tx, ack, drop, cwnd, state, RTO) on stderr", g_trace);
    cmd.Parse(argc, argv);
    g_segSize = segSize;

    RngSeedManager::SetSeed(2014);
    RngSeedManager::SetRun(seed);

    Time rtt(rttStr);
    Time quarter = rtt / 4;
    const double rateBps = 2e6;

    // ---------------------------------------------------------------- TCP (closest to ns-2 Sack1)
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue(tcpCc));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", StringValue(recovery));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segSize));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(3));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(100)));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(3)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 24));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 24));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(10)));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(Seconds(1)));

    // ---------------------------------------------------------------- topology
    NodeContainer nodes;
    nodes.Create(3); // 0 sender, 1 A (bottleneck router), 2 receiver
    InternetStackHelper stack;
    stack.Install(nodes);

    PointToPointHelper fast;
    fast.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
    fast.SetChannelAttribute("Delay", TimeValue(quarter));
    // MTU above the 1512-byte data packets (1460 B payload + 40 B headers + 12 B timestamp
    // option), so IP never fragments them.
    fast.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    NetDeviceContainer dFast = fast.Install(nodes.Get(0), nodes.Get(1));

    PointToPointHelper slow;
    slow.SetDeviceAttribute("DataRate", DataRateValue(DataRate(uint64_t(rateBps))));
    slow.SetChannelAttribute("Delay", TimeValue(quarter));
    slow.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    // One packet of device queue below the qdisc (the smallest ns-3 allows): the qdisc, not the
    // device, holds the backlog.
    slow.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
    NetDeviceContainer dSlow = slow.Install(nodes.Get(1), nodes.Get(2));

    std::ostringstream qcfg; // settings, for the JSON
    TrafficControlHelper tch;
    std::string lim = std::to_string(limitPkts) + "p";
    if (qdisc == "codel")
    {
        tch.SetRootQueueDisc("ns3::CoDelQueueDisc", "MaxSize", StringValue(lim), "Target",
                             StringValue("5ms"), "Interval", StringValue("100ms"), "MinBytes",
                             UintegerValue(1500));
        qcfg << "{\"type\": \"ns3::CoDelQueueDisc\", \"MaxSize\": " << Q(lim)
             << ", \"Target\": \"5ms\", \"Interval\": \"100ms\", \"MinBytes\": 1500}";
    }
    else if (qdisc == "pie" || qdisc == "pie_thresh" || qdisc == "pie_update")
    {
        // PIE with the 2013 rate-based delay estimate (UseDequeueRateEstimator). dq_threshold
        // in bytes: 10 (5) packets of 1500 B, as aqmlab converts it.
        uint32_t dq = qdisc == "pie_thresh" ? 7500 : 15000;
        std::string tu = qdisc == "pie_update" ? "60ms" : "30ms";
        tch.SetRootQueueDisc("ns3::PieQueueDisc",
                             "MaxSize", StringValue(lim),
                             "QueueDelayReference", StringValue("20ms"),
                             "A", DoubleValue(0.125),
                             "B", DoubleValue(1.25),
                             "MaxBurstAllowance", StringValue("100ms"),
                             "Tupdate", StringValue(tu),
                             "DequeueThreshold", UintegerValue(dq),
                             "UseDequeueRateEstimator", BooleanValue(true),
                             "UseCapDropAdjustment", BooleanValue(false),
                             "UseDerandomization", BooleanValue(false),
                             "MeanPktSize", UintegerValue(1512));
        qcfg << "{\"type\": \"ns3::PieQueueDisc\", \"MaxSize\": " << Q(lim)
             << ", \"QueueDelayReference\": \"20ms\", \"A\": 0.125, \"B\": 1.25, "
                "\"MaxBurstAllowance\": \"100ms\", \"Tupdate\": "
             << Q(tu) << ", \"DequeueThreshold\": " << dq
             << ", \"UseDequeueRateEstimator\": true, \"UseCapDropAdjustment\": false, "
                "\"UseDerandomization\": false, \"MeanPktSize\": 1512}";
    }
    else if (qdisc == "hred" || qdisc == "hred_aggressive")
    {
        double qw = qdisc == "hred" ? 0.02 : 0.04;
        double lInterm = 1.0 / 0.65; // max_p = 1 / LInterm
        tch.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MaxSize", StringValue(lim),
                             "MinTh", DoubleValue(3),
                             "MaxTh", DoubleValue(40),
                             "QW", DoubleValue(qw),
                             "LInterm", DoubleValue(lInterm),
                             "Gentle", BooleanValue(true),
                             "Wait", BooleanValue(true),
                             "MeanPktSize", UintegerValue(500),
                             "LinkBandwidth", DataRateValue(DataRate(uint64_t(rateBps))),
                             "LinkDelay", TimeValue(quarter),
                             "UseEcn", BooleanValue(false),
                             "ARED", BooleanValue(false));
        qcfg << "{\"type\": \"ns3::RedQueueDisc\", \"MaxSize\": " << Q(lim)
             << ", \"MinTh\": 3, \"MaxTh\": 40, \"QW\": " << qw << ", \"LInterm\": "
             << Num(lInterm)
             << ", \"Gentle\": true, \"Wait\": true, \"MeanPktSize\": 500, "
                "\"LinkBandwidth\": \"2Mbps\", \"UseEcn\": false, \"ARED\": false}";
    }
    else if (qdisc == "sfq_codel")
    {
        tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc", "MaxSize", StringValue(lim), "Target",
                             StringValue("5ms"), "Interval", StringValue("100ms"));
        qcfg << "{\"type\": \"ns3::FqCoDelQueueDisc\", \"MaxSize\": " << Q(lim)
             << ", \"Target\": \"5ms\", \"Interval\": \"100ms\", \"Flows\": 1024, "
                "\"DropBatchSize\": 64, \"Quantum\": \"device MTU (default)\"}";
    }
    else if (qdisc == "pfifo")
    {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(lim));
        qcfg << "{\"type\": \"ns3::FifoQueueDisc\", \"MaxSize\": " << Q(lim) << "}";
    }
    else
    {
        NS_ABORT_MSG("unknown qdisc " << qdisc);
    }
    Ptr<QueueDisc> bq = tch.Install(dSlow.Get(0)).Get(0);

    TrafficControlHelper ackTc; // the ACK direction: a plain 100-packet FIFO
    ackTc.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue("100p"));
    ackTc.Install(dSlow.Get(1));

    Ipv4AddressHelper addr;
    addr.SetBase("10.1.1.0", "255.255.255.0");
    addr.Assign(dFast);
    addr.SetBase("10.1.2.0", "255.255.255.0");
    Ipv4InterfaceContainer iSlow = addr.Assign(dSlow);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    bq->TraceConnectWithoutContext("Enqueue", MakeCallback(&OnEnqueue));
    bq->TraceConnectWithoutContext("Dequeue", MakeCallback(&OnDequeue));
    bq->TraceConnectWithoutContext("DropBeforeEnqueue", MakeCallback(&OnDropBeforeEnqueue));
    bq->TraceConnectWithoutContext("DropAfterDequeue", MakeCallback(&OnDropAfterDequeue));
    dSlow.Get(0)->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&OnPhyTxBegin));
    g_bn.spike60.thresholdBytes = 0.060 * rateBps / 8; // 15000 B
    g_bn.spike100.thresholdBytes = 0.100 * rateBps / 8; // 25000 B

    // ---------------------------------------------------------------- workload
    const uint16_t port = 5000;
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinks = sinkHelper.Install(nodes.Get(2));
    sinks.Start(Seconds(0));

    Ptr<UniformRandomVariable> offset = CreateObject<UniformRandomVariable>();
    offset->SetAttribute("Min", DoubleValue(0));
    offset->SetAttribute("Max", DoubleValue(maxOffsetS));
    offset->SetStream(1);
    double g2Start = offset->GetValue();

    uint32_t perFlow = groupBytes / n;
    for (int g = 0; g < 2; g++)
    {
        for (uint32_t i = 0; i < n; i++)
        {
            Flow f;
            f.group = g;
            f.bytes = perFlow;
            f.startS = g == 0 ? 0.0 : g2Start;
            BulkSendHelper bs("ns3::TcpSocketFactory",
                              InetSocketAddress(iSlow.GetAddress(1), port));
            bs.SetAttribute("MaxBytes", UintegerValue(perFlow));
            bs.SetAttribute("SendSize", UintegerValue(segSize));
            ApplicationContainer a = bs.Install(nodes.Get(0));
            a.Start(Seconds(f.startS));
            f.app = DynamicCast<BulkSendApplication>(a.Get(0));
            g_flows.push_back(f);
        }
    }
    for (uint32_t id = 0; id < g_flows.size(); id++)
    {
        Simulator::Schedule(Seconds(g_flows[id].startS) + NanoSeconds(1), &Hook, id);
    }

    Simulator::Stop(Seconds(stopS));
    Simulator::Run();
    int64_t endNs = Simulator::Now().GetNanoSeconds();
    g_bn.spike60.Finish(endNs);
    g_bn.spike100.Finish(endNs);

    // ---------------------------------------------------------------- output
    std::ostringstream o;
    o << "{\"program\": \"transients2014-ns3\", \"ns3_version\": \"3.44\"";
    o << ", \"qdisc\": " << Q(qdisc) << ", \"n\": " << n << ", \"seed\": " << seed
      << ", \"rtt\": " << Q(rttStr);
    o << ", \"settings\": {\"rate_bps\": " << Num(rateBps)
      << ", \"topology\": \"sender -10Gbps,rtt/4- A -2Mbps,rtt/4- receiver; ACKs back over "
         "2Mbps (FifoQueueDisc 100p) and 10Gbps\""
      << ", \"one_way_quarter_ms\": " << Num(quarter.GetSeconds() * 1e3)
      << ", \"device_mtu\": " << mtu << ", \"device_queue\": \"DropTailQueue 1p\", \"bottleneck_qdisc\": " << qcfg.str()
      << ", \"tcp\": {\"SocketType\": " << Q(tcpCc) << ", \"RecoveryType\": " << Q(recovery)
      << ", \"SegmentSize\": " << segSize
      << ", \"InitialCwnd\": 3, \"DelAckCount\": 2, \"DelAckTimeout\": \"100ms\", "
         "\"ConnTimeout\": \"3s\", \"SndBufSize\": 16777216, \"RcvBufSize\": 16777216, "
         "\"Sack\": true, \"Timestamp\": true, \"WindowScaling\": true, \"MinRto\": \"200ms\", "
         "\"ClockGranularity\": \"10ms\", \"RttEstimator::InitialEstimation\": \"1s\"}"
      << ", \"app\": \"BulkSendApplication SendSize=segsize, PacketSink\""
      << ", \"group_bytes\": " << groupBytes << ", \"bytes_per_flow\": " << perFlow
      << ", \"group2_offset\": \"uniform 0..0.65 s (stream 1)\""
      << ", \"rng\": {\"seed\": 2014, \"run\": " << seed << "}}";
    o << ", \"group2_start_s\": " << Num(g2Start);
    o << ", \"end_s\": " << Num(endNs / 1e9);
    o << ", \"flows\": [";
    for (size_t i = 0; i < g_flows.size(); i++)
    {
        const Flow& f = g_flows[i];
        o << (i ? ", " : "") << "{\"group\": " << f.group << ", \"bytes\": " << f.bytes
          << ", \"first_syn_s\": " << OptNum(f.firstSynS)
          << ", \"completed_s\": " << OptNum(f.completedS)
          << ", \"recoveries\": " << f.recoveries << ", \"rtos\": " << f.rtos
          << ", \"retx_bytes\": " << f.retxBytes << ", \"rto_cwnd_ssthresh\": [";
        for (size_t k = 0; k < f.rtoLog.size(); k++)
        {
            o << (k ? ", " : "") << "[" << Num(f.rtoLog[k].first) << ", "
              << Num(f.rtoLog[k].second) << "]";
        }
        o << "]}";
    }
    o << "]";
    o << ", \"enqueued\": " << g_bn.enqueued << ", \"tx_unknown\": " << g_bn.txUnknown
      << ", \"drop_unknown\": " << g_bn.dropUnknown << ", \"left_in_queue\": " << g_bn.nPending
      << ", \"max_backlog_pkts\": " << g_bn.maxBacklogPkts;
    o << ", \"drops\": {";
    bool first = true;
    for (const auto& [r, c] : g_bn.dropReasons)
    {
        o << (first ? "" : ", ") << Q(r) << ": " << c;
        first = false;
    }
    o << "}";
    o << ", \"spike60_s\": " << Num(g_bn.spike60.best / 1e9)
      << ", \"spike100_s\": " << Num(g_bn.spike100.best / 1e9);
    int64_t maxDelay = g_bn.delays.empty()
                           ? -1
                           : *std::max_element(g_bn.delays.begin(), g_bn.delays.end());
    int64_t maxSoj = g_bn.qdiscSojourns.empty() ? -1
                                                : *std::max_element(g_bn.qdiscSojourns.begin(),
                                                                    g_bn.qdiscSojourns.end());
    o << ", \"max_delay_s\": " << OptNum(maxDelay < 0 ? -1 : maxDelay / 1e9)
      << ", \"max_delay_enqueued_s\": " << OptNum(g_bn.maxDelayEnqNs < 0 ? -1 : g_bn.maxDelayEnqNs / 1e9)
      << ", \"max_qdisc_sojourn_s\": " << OptNum(maxSoj < 0 ? -1 : maxSoj / 1e9);
    if (delays)
    {
        o << ", \"delays_ns\": [";
        for (size_t i = 0; i < g_bn.delays.size(); i++)
        {
            o << (i ? "," : "") << g_bn.delays[i];
        }
        o << "], \"qdisc_sojourn_ns\": [";
        for (size_t i = 0; i < g_bn.qdiscSojourns.size(); i++)
        {
            o << (i ? "," : "") << g_bn.qdiscSojourns[i];
        }
        o << "]";
    }
    o << "}";
    std::cout << o.str() << std::endl;
    Simulator::Destroy();
    return 0;
}
