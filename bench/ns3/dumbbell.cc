// aqmlab ns-3 reference scenario: dumbbell of N TCP bulk flows through one
// bottleneck queue disc.  Built by bench/ns3/build.sh against the ns-3 3.44
// libraries shipped in the PyPI wheel `ns3==3.44.post0`.
//
// Topology (all links point-to-point, full duplex):
//
//   S_0 ..S_{N-1} --access--> A ==bottleneck==> B --access--> R_0 .. R_{N-1}
//
// * access links: --access-rate (default 1Gbps, or 10 x the bottleneck rate
//   when the bottleneck is >= 1 Gb/s), one-way delay --access-delay (1 ms).
// * bottleneck A->B: --rate, one-way delay rtt/2 - 2*access-delay, so that the
//   two-way propagation delay S_i -> R_i -> S_i is exactly --rtt.
// * the queue disc under test (--qdisc) sits on A's bottleneck device; the
//   device's own transmit queue is 1 packet so the queue disc holds the queue.
// * all other devices have no queue disc (--other-qdisc=none, default) and a
//   1000-packet device queue; they never build a standing queue.  With
//   --other-qdisc=default they keep ns-3's default root qdisc (fq_codel):
//   identical results, about 25% more CPU.
//
// Output: one JSON object on stdout (see README.md for the fields).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-apps-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

// Fixed-resolution histogram for delays in milliseconds: 10 us bins up to
// 2 s, exact values kept beyond that.  Keeps memory flat for long runs.
class DelayHist
{
  public:
    static constexpr double kBinMs = 0.01;
    static constexpr std::size_t kBins = 200000;

    void Add(double ms)
    {
        ++m_n;
        m_sum += ms;
        auto idx = static_cast<std::size_t>(ms / kBinMs);
        if (idx < kBins)
        {
            if (m_bins.empty())
            {
                m_bins.assign(kBins, 0);
            }
            ++m_bins[idx];
        }
        else
        {
            m_over.push_back(ms);
        }
    }

    uint64_t Count() const
    {
        return m_n;
    }

    double Mean() const
    {
        return m_n ? m_sum / static_cast<double>(m_n) : 0.0;
    }

    // Nearest-rank percentile; bin values reported at the bin midpoint.
    double Percentile(double p)
    {
        if (m_n == 0)
        {
            return 0.0;
        }
        auto rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(m_n)));
        rank = std::max<uint64_t>(rank, 1);
        uint64_t seen = 0;
        for (std::size_t i = 0; i < m_bins.size(); ++i)
        {
            seen += m_bins[i];
            if (seen >= rank)
            {
                return (static_cast<double>(i) + 0.5) * kBinMs;
            }
        }
        std::sort(m_over.begin(), m_over.end());
        std::size_t k = static_cast<std::size_t>(rank - seen - 1);
        return m_over[std::min(k, m_over.size() - 1)];
    }

  private:
    uint64_t m_n{0};
    double m_sum{0.0};
    std::vector<uint32_t> m_bins;
    std::vector<double> m_over;
};

struct Recorder
{
    uint64_t bottleneckPackets{0};
    double warmupS{5.0};
    DelayHist sojourn;
    DelayHist pingRtt;
    uint64_t pingReplies{0};
    // TCP senders entering loss recovery (CA_RECOVERY) and the RTO state (CA_LOSS), all flows:
    // over the whole run and after the warmup.
    uint64_t recoveriesAll{0};
    uint64_t rtosAll{0};
    uint64_t recoveries{0};
    uint64_t rtos{0};
};

Recorder g_rec;

void
OnBottleneckTxEnd(Ptr<const Packet>)
{
    ++g_rec.bottleneckPackets;
}

void
OnSojourn(Time t)
{
    if (Simulator::Now().GetSeconds() >= g_rec.warmupS)
    {
        g_rec.sojourn.Add(t.GetSeconds() * 1e3);
    }
}

void
OnCongState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    const bool measured = Simulator::Now().GetSeconds() >= g_rec.warmupS;
    if (now == TcpSocketState::CA_RECOVERY)
    {
        ++g_rec.recoveriesAll;
        g_rec.recoveries += measured;
    }
    else if (now == TcpSocketState::CA_LOSS)
    {
        ++g_rec.rtosAll;
        g_rec.rtos += measured;
    }
}

void
ConnectCongState()
{
    Config::ConnectWithoutContextFailSafe("/NodeList/*/$ns3::TcpL4Protocol/SocketList/*/CongState",
                                          MakeCallback(&OnCongState));
}

void
OnPingRtt(uint16_t, Time rtt)
{
    ++g_rec.pingReplies;
    if (Simulator::Now().GetSeconds() >= g_rec.warmupS)
    {
        g_rec.pingRtt.Add(rtt.GetSeconds() * 1e3);
    }
}

std::vector<uint64_t> g_rxAtWarmup;

void
SnapshotSinks(ApplicationContainer sinks)
{
    g_rxAtWarmup.clear();
    for (uint32_t i = 0; i < sinks.GetN(); ++i)
    {
        g_rxAtWarmup.push_back(DynamicCast<PacketSink>(sinks.Get(i))->GetTotalRx());
    }
}

std::string
JsonEscape(const std::string& s)
{
    std::string out;
    for (char c : s)
    {
        if (c == '"' || c == '\\')
        {
            out += '\\';
            out += c;
        }
        else if (static_cast<unsigned char>(c) < 0x20)
        {
            out += ' ';
        }
        else
        {
            out += c;
        }
    }
    return out;
}

// All readable attributes of an object (including inherited ones) as a JSON
// object, so the exact configuration of the queue disc is on record.
std::string
AttributesJson(Ptr<Object> obj)
{
    std::ostringstream os;
    os << "{";
    bool first = true;
    for (TypeId tid = obj->GetInstanceTypeId();; tid = tid.GetParent())
    {
        for (std::size_t i = 0; i < tid.GetAttributeN(); ++i)
        {
            TypeId::AttributeInformation info = tid.GetAttribute(i);
            const std::string& n = info.name;
            if (!(info.flags & TypeId::ATTR_GET) || !info.accessor->HasGetter() ||
                (n.size() > 4 && n.compare(n.size() - 4, 4, "List") == 0))
            {
                continue;
            }
            Ptr<AttributeValue> v = info.checker->Create();
            if (!info.accessor->Get(PeekPointer(obj), *v))
            {
                continue;
            }
            os << (first ? "" : ", ") << "\"" << JsonEscape(info.name) << "\": \""
               << JsonEscape(v->SerializeToString(info.checker)) << "\"";
            first = false;
        }
        if (tid == tid.GetParent())
        {
            break;
        }
    }
    os << "}";
    return os.str();
}

std::string
QdiscTypeName(const std::string& q)
{
    if (q == "fq_codel")
    {
        return "ns3::FqCoDelQueueDisc";
    }
    if (q == "codel")
    {
        return "ns3::CoDelQueueDisc";
    }
    if (q == "pie")
    {
        return "ns3::PieQueueDisc";
    }
    if (q == "red")
    {
        return "ns3::RedQueueDisc";
    }
    if (q == "pfifo")
    {
        return "ns3::FifoQueueDisc";
    }
    return "";
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t flows = 8;
    std::string rateStr = "100Mbps";
    std::string accessRateStr = "";
    std::string rttStr = "50ms";
    std::string accessDelayStr = "1ms";
    double duration = 60.0;
    double warmup = 5.0;
    std::string qdisc = "fq_codel";
    std::string cc = "cubic";
    uint32_t limit = 0; // 0: qdisc default (pfifo: 1000p)
    bool ecn = false;
    uint32_t seed = 1;
    uint32_t run = 1;
    double pingInterval = 0.0; // 0: no ping
    uint32_t sndBuf = 0;       // 0: automatic
    double startSpread = 1.0;
    bool dumpConfig = false;
    std::string otherQdisc = "none";

    CommandLine cmd(__FILE__);
    cmd.AddValue("flows", "number of TCP bulk flows", flows);
    cmd.AddValue("rate", "bottleneck rate (ns-3 DataRate string)", rateStr);
    cmd.AddValue("access-rate", "access link rate (default: 1Gbps, 10x rate if rate>=1Gbps)",
                 accessRateStr);
    cmd.AddValue("rtt", "base two-way propagation delay", rttStr);
    cmd.AddValue("access-delay", "one-way delay of each access link", accessDelayStr);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("warmup", "seconds excluded from goodput and delay statistics", warmup);
    cmd.AddValue("qdisc", "fq_codel|codel|pie|red|pfifo", qdisc);
    cmd.AddValue("cc", "cubic|newreno", cc);
    cmd.AddValue("limit", "queue disc limit in packets (0 = qdisc default, pfifo 1000)", limit);
    cmd.AddValue("ecn", "1 = ECN on TCP and the queue disc", ecn);
    cmd.AddValue("seed", "RNG seed", seed);
    cmd.AddValue("run", "RNG run number", run);
    cmd.AddValue("ping-interval", "seconds between ICMP echo probes S_0->R_0 (0 = none)",
                 pingInterval);
    cmd.AddValue("sndbuf", "TCP send/receive buffer in bytes (0 = automatic)", sndBuf);
    cmd.AddValue("start-spread", "flow start times uniform in [0, this) seconds", startSpread);
    cmd.AddValue("other-qdisc",
                 "root qdisc on all non-bottleneck devices: none|default (ns-3 default fq_codel)",
                 otherQdisc);
    cmd.AddValue("dump-config", "include queue disc attributes in the JSON", dumpConfig);
    cmd.Parse(argc, argv);

    const std::string qdiscType = QdiscTypeName(qdisc);
    if (qdiscType.empty())
    {
        std::cerr << "unknown --qdisc=" << qdisc << " (fq_codel|codel|pie|red|pfifo)\n";
        return 2;
    }
    if (cc != "cubic" && cc != "newreno")
    {
        std::cerr << "unknown --cc=" << cc << " (cubic|newreno)\n";
        return 2;
    }
    if (flows == 0 || duration <= warmup)
    {
        std::cerr << "need --flows >= 1 and --duration > --warmup\n";
        return 2;
    }
    g_rec.warmupS = warmup;

    const DataRate rate(rateStr);
    DataRate accessRate;
    if (accessRateStr.empty())
    {
        accessRate = rate.GetBitRate() >= 1000000000ULL ? DataRate(rate.GetBitRate() * 10)
                                                          : DataRate("1Gbps");
    }
    else
    {
        accessRate = DataRate(accessRateStr);
    }
    const Time rtt(rttStr);
    const Time accessDelay(accessDelayStr);
    const Time bottleneckDelay = rtt / 2 - accessDelay * 2;
    if (bottleneckDelay.IsStrictlyNegative())
    {
        std::cerr << "--rtt too small for --access-delay\n";
        return 2;
    }

    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);

    // ---- TCP defaults ----
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(cc == "cubic" ? TcpCubic::GetTypeId()
                                                 : TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    if (ecn)
    {
        Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));
    }
    const uint32_t effLimit = (limit == 0 && qdisc == "pfifo") ? 1000 : limit;
    if (sndBuf == 0)
    {
        // Room for 4x the fair share of (BDP + a full 1000-packet buffer), at
        // least 128 KiB: flows are never window-limited by the socket buffer.
        double bdp = rate.GetBitRate() / 8.0 * rtt.GetSeconds();
        double q = 1500.0 * std::max<uint32_t>(effLimit, 1000);
        sndBuf = static_cast<uint32_t>(std::max(131072.0, 4.0 * (bdp + q) / flows));
    }
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sndBuf));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(sndBuf));

    // ---- topology ----
    NodeContainer routers;
    routers.Create(2);
    NodeContainer senders;
    senders.Create(flows);
    NodeContainer receivers;
    receivers.Create(flows);

    PointToPointHelper accessLink;
    accessLink.SetDeviceAttribute("DataRate", DataRateValue(accessRate));
    accessLink.SetDeviceAttribute("Mtu", UintegerValue(1500));
    accessLink.SetChannelAttribute("Delay", TimeValue(accessDelay));
    accessLink.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1000p"));

    PointToPointHelper bottleLink;
    bottleLink.SetDeviceAttribute("DataRate", DataRateValue(rate));
    bottleLink.SetDeviceAttribute("Mtu", UintegerValue(1500));
    bottleLink.SetChannelAttribute("Delay", TimeValue(bottleneckDelay));
    bottleLink.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));

    NetDeviceContainer bottleDevs = bottleLink.Install(routers.Get(0), routers.Get(1));
    // The reverse (B->A, ACK) direction gets a roomy device queue too.
    DynamicCast<PointToPointNetDevice>(bottleDevs.Get(1))
        ->GetQueue()
        ->SetAttribute("MaxSize", QueueSizeValue(QueueSize("1000p")));
    std::vector<NetDeviceContainer> leftDevs;
    std::vector<NetDeviceContainer> rightDevs;
    for (uint32_t i = 0; i < flows; ++i)
    {
        leftDevs.push_back(accessLink.Install(senders.Get(i), routers.Get(0)));
        rightDevs.push_back(accessLink.Install(routers.Get(1), receivers.Get(i)));
    }

    InternetStackHelper stack;
    stack.InstallAll();

    // The queue disc under test, installed before addresses are assigned so
    // that Ipv4AddressHelper does not put its default qdisc there.
    TrafficControlHelper tch;
    tch.SetRootQueueDisc(qdiscType);
    QueueDiscContainer qdiscs = tch.Install(bottleDevs.Get(0));
    Ptr<QueueDisc> bq = qdiscs.Get(0);
    if (effLimit > 0)
    {
        std::ostringstream lim;
        lim << effLimit << "p";
        bq->SetAttribute("MaxSize", QueueSizeValue(QueueSize(lim.str())));
    }
    if (qdisc != "pfifo")
    {
        // Explicit either way (ns-3's FqCoDel defaults to UseEcn=true; it
        // only matters for ECT packets, i.e. when TCP negotiates ECN).
        bq->SetAttribute("UseEcn", BooleanValue(ecn));
    }
    if (qdisc == "red")
    {
        // Topology facts (used by RED for the idle-period average decay);
        // every tuning parameter stays at the ns-3 default.
        bq->SetAttribute("LinkBandwidth", DataRateValue(rate));
        bq->SetAttribute("LinkDelay", TimeValue(bottleneckDelay));
    }
    bq->TraceConnectWithoutContext("SojournTime", MakeCallback(&OnSojourn));
    bottleDevs.Get(0)->TraceConnectWithoutContext("PhyTxEnd",
                                                  MakeCallback(&OnBottleneckTxEnd));

    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");
    addr.Assign(bottleDevs);
    std::vector<Ipv4Address> rxAddr;
    // Each access subnet is a /30 carved from 10.1.0.0/16 and 10.2.0.0/16.
    for (uint32_t i = 0; i < flows; ++i)
    {
        std::ostringstream l;
        l << "10." << (1 + i / 16384 * 2) << "." << ((i % 16384) * 4 / 256) << "."
          << ((i * 4) % 256);
        addr.SetBase(Ipv4Address(l.str().c_str()), "255.255.255.252");
        addr.Assign(leftDevs[i]);
        std::ostringstream r;
        r << "10." << (2 + i / 16384 * 2) << "." << ((i % 16384) * 4 / 256) << "."
          << ((i * 4) % 256);
        addr.SetBase(Ipv4Address(r.str().c_str()), "255.255.255.252");
        Ipv4InterfaceContainer ifs = addr.Assign(rightDevs[i]);
        rxAddr.push_back(ifs.GetAddress(1));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    if (otherQdisc == "none")
    {
        // Only the bottleneck device keeps a queue disc; the others hand
        // packets straight to their (1000-packet) device queues.  These
        // links never congest, and ns-3 does less work per packet.
        TrafficControlHelper none;
        none.Uninstall(bottleDevs.Get(1));
        for (uint32_t i = 0; i < flows; ++i)
        {
            none.Uninstall(leftDevs[i]);
            none.Uninstall(rightDevs[i]);
        }
    }
    else if (otherQdisc != "default")
    {
        std::cerr << "unknown --other-qdisc=" << otherQdisc << " (none|default)\n";
        return 2;
    }

    // ---- applications ----
    const uint16_t port = 5000;
    ApplicationContainer sinks;
    ApplicationContainer sources;
    Ptr<UniformRandomVariable> startRv = CreateObject<UniformRandomVariable>();
    startRv->SetStream(1);
    for (uint32_t i = 0; i < flows; ++i)
    {
        PacketSinkHelper sink("ns3::TcpSocketFactory",
                              InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer s = sink.Install(receivers.Get(i));
        s.Start(Seconds(0.0));
        sinks.Add(s);

        BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(rxAddr[i], port));
        src.SetAttribute("MaxBytes", UintegerValue(0));
        src.SetAttribute("SendSize", UintegerValue(1448));
        ApplicationContainer a = src.Install(senders.Get(i));
        a.Start(Seconds(startSpread > 0 ? startRv->GetValue(0.0, startSpread) : 0.0));
        sources.Add(a);
    }
    if (pingInterval > 0)
    {
        PingHelper ping(rxAddr[0]);
        ping.SetAttribute("Interval", TimeValue(Seconds(pingInterval)));
        ping.SetAttribute("VerboseMode", EnumValue(Ping::SILENT));
        ApplicationContainer p = ping.Install(senders.Get(0));
        p.Get(0)->TraceConnectWithoutContext("Rtt", MakeCallback(&OnPingRtt));
        p.Start(Seconds(0.5));
        p.Stop(Seconds(duration));
    }
    Simulator::Schedule(Seconds(warmup), &SnapshotSinks, sinks);
    // Every sender socket exists once its application has started (all within start-spread).
    Simulator::Schedule(Seconds(std::min(startSpread, warmup) + 1e-3), &ConnectCongState);
    Simulator::Stop(Seconds(duration));

    // ---- run ----
    timespec c0{};
    timespec c1{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t1 = std::chrono::steady_clock::now();
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    const double wallS = std::chrono::duration<double>(t1 - t0).count();
    const double cpuS = (c1.tv_sec - c0.tv_sec) + (c1.tv_nsec - c0.tv_nsec) * 1e-9;
    const uint64_t events = Simulator::GetEventCount();

    // ---- results ----
    const double measureS = duration - warmup;
    std::vector<double> perFlow;
    double total = 0.0;
    for (uint32_t i = 0; i < sinks.GetN(); ++i)
    {
        uint64_t rx = DynamicCast<PacketSink>(sinks.Get(i))->GetTotalRx();
        uint64_t base = i < g_rxAtWarmup.size() ? g_rxAtWarmup[i] : 0;
        double mbps = (rx - base) * 8.0 / measureS / 1e6;
        perFlow.push_back(mbps);
        total += mbps;
    }
    const QueueDisc::Stats& st = bq->GetStats();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    const double rssMb = ru.ru_maxrss / 1024.0;

    std::ostringstream js;
    js << std::setprecision(6);
    js << "{\"simulator\": \"ns-3.44\", \"qdisc\": \"" << qdisc << "\", \"cc\": \"" << cc
       << "\", \"flows\": " << flows << ", \"rate_bps\": " << rate.GetBitRate()
       << ", \"access_rate_bps\": " << accessRate.GetBitRate()
       << ", \"rtt_ms\": " << rtt.GetSeconds() * 1e3
       << ", \"bottleneck_delay_ms\": " << bottleneckDelay.GetSeconds() * 1e3
       << ", \"access_delay_ms\": " << accessDelay.GetSeconds() * 1e3
       << ", \"limit_pkts\": " << bq->GetMaxSize().GetValue() << ", \"ecn\": " << (ecn ? 1 : 0)
       << ", \"seed\": " << seed << ", \"run\": " << run << ", \"sndbuf_bytes\": " << sndBuf
       << ", \"warmup_s\": " << warmup;
    js << ", \"wall_s\": " << wallS << ", \"cpu_s\": " << cpuS << ", \"sim_s\": " << duration
       << ", \"bottleneck_packets\": " << g_rec.bottleneckPackets << ", \"events\": " << events
       << ", \"events_per_packet\": "
       << (g_rec.bottleneckPackets ? double(events) / g_rec.bottleneckPackets : 0.0)
       << ", \"pkts_per_wall_s\": " << (wallS > 0 ? g_rec.bottleneckPackets / wallS : 0.0)
       << ", \"pkts_per_cpu_s\": " << (cpuS > 0 ? g_rec.bottleneckPackets / cpuS : 0.0)
       << ", \"goodput_mbps\": " << total << ", \"per_flow_goodput_mbps\": [";
    for (std::size_t i = 0; i < perFlow.size(); ++i)
    {
        js << (i ? ", " : "") << perFlow[i];
    }
    js << "], \"queue_delay_ms\": {\"p50\": " << g_rec.sojourn.Percentile(50)
       << ", \"p95\": " << g_rec.sojourn.Percentile(95) << ", \"p99\": "
       << g_rec.sojourn.Percentile(99) << ", \"mean\": " << g_rec.sojourn.Mean()
       << ", \"samples\": " << g_rec.sojourn.Count() << "}";
    js << ", \"drops\": " << st.nTotalDroppedPackets << ", \"marks\": " << st.nTotalMarkedPackets
       << ", \"qdisc_dequeued\": " << st.nTotalDequeuedPackets
       << ", \"tcp_recoveries\": " << g_rec.recoveries << ", \"tcp_rtos\": " << g_rec.rtos
       << ", \"tcp_recoveries_all\": " << g_rec.recoveriesAll
       << ", \"tcp_rtos_all\": " << g_rec.rtosAll;
    if (pingInterval > 0)
    {
        js << ", \"ping_rtt_ms\": {\"p50\": " << g_rec.pingRtt.Percentile(50)
           << ", \"p95\": " << g_rec.pingRtt.Percentile(95)
           << ", \"mean\": " << g_rec.pingRtt.Mean() << ", \"samples\": " << g_rec.pingRtt.Count()
           << ", \"replies_total\": " << g_rec.pingReplies << "}";
    }
    if (auto fq = DynamicCast<FqCoDelQueueDisc>(bq))
    {
        js << ", \"fq_codel_quantum_bytes\": " << fq->GetQuantum();
    }
    js << ", \"peak_rss_mb\": " << rssMb;
    if (dumpConfig)
    {
        js << ", \"qdisc_type\": \"" << qdiscType << "\", \"qdisc_attributes\": "
           << AttributesJson(bq);
    }
    js << "}";
    std::cout << js.str() << std::endl;

    Simulator::Destroy();
    return 0;
}
