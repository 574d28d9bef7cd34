# lpcc2013's simulation in ns-2.35: N best-effort NewReno flows and N low-priority flows, all
# backlogged from t = 0, through one bottleneck (3c: 4 Mb/s, 400 packets; 3a: 10 Mb/s, 500).
#
#   ns lpcc.tcl QDISC LPCC N RATE_MBPS LIMIT SEED DURATION_S TRACE [KEY=VALUE ...]
#
# QDISC: droptail, red, sfq, drr, codel (ns-2.35's own classes, and the project's CoDel module);
# LPCC: tcp_lp (Agent/TCP/Linux with ns-2.35's tcp_lp.c) or newreno (a best-effort control: both
# classes NewReno); SEED for ns-2's default RNG (RED's coins, the start jitter); TRACE: the
# bottleneck queue's trace file (+ - d events). KEY=VALUE pairs set a default "Class var" before
# anything is created, for one-change runs, e.g. Queue/SFQ/maxqueue_=400.
# Prints one line per flow: "flow CLASS FID BYTES_ACKED".
source [file join [file dirname [info script]] defaults.tcl]
lassign $argv qdisc lpcc n rate_mbps limit seed duration trace_file
set_class_defaults [lrange $argv 8 end]

# The study's segment size is not given: ns-2's default packetSize_ (1000 B). The window is
# raised out of the way (ns-2's window_ of 20 would cap ten flows below the buffer).
Agent/TCP set window_ 100000
Agent/TCP set packetSize_ 1000

# The bottleneck's queue as a user of ns-2.35 names it; every setting not given by the study is
# ns-2's default (tcl/lib/ns-default.tcl). `$ns queue-limit` below sets limit_, which DropTail,
# RED and CoDel obey; SFQ and DRR do not read limit_ (their own maxqueue_ 40 packets and
# blimit_ 25000 bytes apply).
proc bottleneck_queue {qdisc} {
    switch $qdisc {
        droptail { return DropTail }
        red { return RED }
        sfq { return SFQ }
        drr { return DRR }
        codel { return CoDel }
        default { error "unknown qdisc $qdisc" }
    }
}

# One sender and one receiver node per flow (a dumbbell), 100 Mb/s access links; the
# propagation delays make a 50 ms round trip: 2 x (1 + 23 + 1) ms.
set ns [new Simulator]
$defaultRNG seed $seed
set r1 [$ns node]
set r2 [$ns node]
$ns simplex-link $r1 $r2 ${rate_mbps}Mb 23ms [bottleneck_queue $qdisc]
$ns simplex-link $r2 $r1 ${rate_mbps}Mb 23ms DropTail
$ns queue-limit $r1 $r2 $limit
$ns queue-limit $r2 $r1 $limit
set tf [open $trace_file w]
$ns trace-queue $r1 $r2 $tf

proc lp_agent {lpcc} {
    if {$lpcc eq "newreno"} {
        return [list [new Agent/TCP/Newreno] [new Agent/TCPSink/DelAck]]
    }
    # TCP-LP: ns-2.35's Linux congestion-control module, with the timestamps it reads the
    # one-way delay from (rcv_tsval, rcv_tsecr), and a SACK sink as Agent/TCP/Linux expects.
    set tcp [new Agent/TCP/Linux]
    $tcp set timestamps_ true
    $tcp select_ca lp
    set sink [new Agent/TCPSink/Sack1/DelAck]
    $sink set ts_echo_rfc1323_ true
    return [list $tcp $sink]
}

set rng [new RNG]
$rng seed $seed
set flows {}
foreach cls {be lp} {
    for {set i 0} {$i < $n} {incr i} {
        set src [$ns node]
        set dst [$ns node]
        $ns duplex-link $src $r1 100Mb 1ms DropTail
        $ns duplex-link $r2 $dst 100Mb 1ms DropTail
        $ns queue-limit $src $r1 10000
        if {$cls eq "be"} {
            lassign [list [new Agent/TCP/Newreno] [new Agent/TCPSink/DelAck]] tcp sink
        } else {
            lassign [lp_agent $lpcc] tcp sink
        }
        $tcp set fid_ [llength $flows]
        $ns attach-agent $src $tcp
        $ns attach-agent $dst $sink
        $ns connect $tcp $sink
        set ftp [new Application/FTP]
        $ftp attach-agent $tcp
        # Backlogged from t = 0; a start jitter under 1 ms keeps the flows' packets apart.
        set t0 [$rng uniform 0 0.001]
        $ns at $t0 "$ftp start"
        set class($tcp) $cls
        lappend flows $tcp
    }
}

proc finish {} {
    global flows class tf
    close $tf
    foreach f $flows {
        puts "flow $class($f) [$f set fid_] [expr {[$f set ack_] * [$f set packetSize_]}]"
    }
    exit 0
}
$ns at $duration finish
$ns run
