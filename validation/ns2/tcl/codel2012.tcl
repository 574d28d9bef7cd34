# codel2012 in ns-2.35: the setups of the authors' "Codel test script v120513", one run.
#
#   ns codel2012.tcl QDISC FTPS WEB CBRS BW_MBPS PSIZE BUFFER RTT_MS DURATION DYNAMIC SEED TRACE [KEY=VALUE ...]
#
# QDISC: codel, red, taildrop on both directions of the bottleneck; FTPS bulk TCP/Linux CUBIC
# flows; WEB PackMime-HTTP connections per second (0: none); CBRS 64 kb/s UDP flows; BW_MBPS the
# bottleneck rate; PSIZE the packet size (the script: 1500, 500 below 1 Mb/s); BUFFER the
# bottleneck's queue-limit in packets (0: the script's bdp); RTT_MS the path's round trip (the
# script: 100 = 2 (2 accessdly + bdelay); other RTTs scale both delays); DURATION s; DYNAMIC 1
# for the script's bandwidth schedule (bw_changes at k x DURATION / 6), 0 for a static link;
# SEED for ns-2's RNGs; TRACE: the n0 -> n1 (downstream) queue's trace (+ - d events).
# KEY=VALUE pairs set a default "Class var" before anything is created, for one-change runs.
source [file join [file dirname [info script]] defaults.tcl]
lassign $argv qdisc num_ftps web_rate num_cbrs bw_mbps psize buffer rtt_ms stopTime dynamic seed trace_file
set_class_defaults [lrange $argv 12 end]

set ns [new Simulator]
set bw [expr {$bw_mbps * 1e6}]
# The script's delays at its 100 ms RTT: access 20 ms, bottleneck 10 ms; other RTTs scale both.
set accessdly [expr {20.0 * $rtt_ms / 100}]
set bdelay [expr {10.0 * $rtt_ms / 100}]
set bdp [expr {round($bw * 0.1 / (8 * $psize))}]
if {$bdp < 1} { set bdp 1 }
set buffersize [expr {$buffer > 0 ? $buffer : $bdp}]
set buffersize1 [expr {$bdp * 10}]
set linkbw [expr {$bw * 10}]
$defaultRNG seed $seed
ns-random $seed

# The script's TCP settings, for the FTPs' TCP/Linux and PackMime's Full-TCP alike.
foreach cls {Agent/TCP Agent/TCP/FullTcp} {
    $cls set window_ [expr {$bdp * 16}]
    $cls set segsize_ [expr {$psize - 40}]
    $cls set packetSize_ [expr {$psize - 40}]
    $cls set windowInit_ 4
    $cls set segsperack_ 1
    $cls set timestamps_ true
    $cls set interval_ 0.4
}
Queue/CoDel set target_ 0.005
Queue/CoDel set interval_ 0.1

proc bottleneck_queue {qdisc} {
    # RED: ns-2.35's Queue/RED as ns-default.tcl leaves it (self-configuring: q_weight_ -1,
    # thresh_ 0, maxthresh_ 0; byte mode, mean_pktsize_ 500; red.cc initialize_params).
    switch $qdisc {
        codel { return CoDel }
        red { return RED }
        taildrop { return DropTail }
        default { error "unknown qdisc $qdisc" }
    }
}

set n0 [$ns node]
set n1 [$ns node]
$ns duplex-link $n0 $n1 $bw ${bdelay}ms [bottleneck_queue $qdisc]
$ns queue-limit $n0 $n1 $buffersize
$ns queue-limit $n1 $n0 $buffersize
if {$dynamic} {
    set k 1
    foreach f {0.1 0.01 0.5 0.01 1.0} {
        set t [expr {$k * $stopTime / 6.0}]
        foreach {a b} [list $n0 $n1 $n1 $n0] {
            $ns at $t "[[$ns link $a $b] link] set bandwidth_ [expr {$f * $bw}]"
        }
        incr k
    }
}
set tf [open $trace_file w]
$ns trace-queue $n0 $n1 $tf

proc access {node gw dly} {
    global ns linkbw buffersize1
    $ns duplex-link $node $gw $linkbw ${dly}ms DropTail
    $ns queue-limit $node $gw $buffersize1
    $ns queue-limit $gw $node $buffersize1
}

proc uniform {a b} {
    expr {$a + ($b - $a) * ([ns-random] * 1.0 / 0x7fffffff)}
}

set fid 1
if {$web_rate > 0} {
    set srv [$ns node]
    set cli [$ns node]
    access $srv $n0 $accessdly
    access $cli $n1 $accessdly
    set pm [new PackMimeHTTP]
    $pm set-TCP Sack
    $pm set-client $cli
    $pm set-server $srv
    $pm set-rate $web_rate
    $pm set-http-1.1
    set rvs [list [new RandomVariable/PackMimeHTTPFlowArrive $web_rate] \
                 [new RandomVariable/PackMimeHTTPFileSize $web_rate 0] \
                 [new RandomVariable/PackMimeHTTPFileSize $web_rate 1]]
    set j 0
    foreach rv $rvs {
        set rng [new RNG]
        $rng seed [expr {3 * $seed + $j + 1}]
        $rv use-rng $rng
        incr j
    }
    $pm set-flow_arrive [lindex $rvs 0]
    $pm set-req_size [lindex $rvs 1]
    $pm set-rsp_size [lindex $rvs 2]
    # PACKMIME_SAMPLES: PackMime's own log of every request it sends (time, request and response
    # bytes, server address.port; PackMimeHTTPClientApp::timeout), for packmime_load.py.
    if {[info exists ::env(PACKMIME_SAMPLES)]} {
        $pm set-samples-outfile $::env(PACKMIME_SAMPLES)
    }
    $ns at 0 "$pm start"
    $ns at $stopTime "$pm stop"
}
for {set k 0} {$k < $num_ftps} {incr k} {
    set s [$ns node]
    set c [$ns node]
    access $s $n0 $accessdly
    # the FTP k's client 1 + k ms further away
    access $c $n1 [expr {$accessdly + ($k + 1) * $rtt_ms / 100.0}]
    set tcp [$ns create-connection TCP/Linux $s TCPSink/Sack1 $c [incr fid]]
    $tcp select_ca cubic
    set ftp [$tcp attach-app FTP]
    $ns at 0 "$ftp start"
}
for {set k 0} {$k < $num_cbrs} {incr k} {
    set s [$ns node]
    set c [$ns node]
    access $s $n0 $accessdly
    access $c $n1 $accessdly
    set udp [$ns create-connection UDP $s LossMonitor $c [incr fid]]
    set cbr [new Application/Traffic/CBR]
    $cbr attach-agent $udp
    $cbr set packetSize_ 100
    $cbr set rate_ 0.064Mb
    $ns at [expr {$k * [uniform 0.0 2.0]}] "$cbr start"
}

proc finish {} {
    global tf
    close $tf
    exit 0
}
$ns at $stopTime finish
$ns run
