# transients2014 in ns-2.35: two groups of N TCP flows over a 2 Mb/s, 70 ms access link.
#
#   ns transients.tcl QDISC N SEED OFFSET RTT_REST_MS SEGMENT TRACE [KEY=VALUE ...]
#
# QDISC: codel, pie, pie_thresh, pie_update, hred, hred_aggressive, sfq_codel, droptail; N flows per group; SEED for ns-2's
# default RNG (RED's and PIE's coins); OFFSET: group 2's start (s); RTT_REST_MS: the rest of the path one way
# (11 or 101); SEGMENT: TCP payload bytes (packetSize_); TRACE: the bottleneck queue's trace
# file (+ - d events). KEY=VALUE pairs set a default "Class var" before anything is created, for
# one-change runs, e.g. Queue/RED/gentle_=false or Agent/TCPSink/DelAck/interval_=0.2.
# Prints one line per flow: "flow GROUP ID START_S DONE_S" (DONE_S -1 if unfinished).
source [file join [file dirname [info script]] defaults.tcl]
lassign $argv qdisc n seed offset rest_ms segment trace_file
set_class_defaults [lrange $argv 7 end]

# TCP as the study ran it: one-way Sack1 with the delayed-ACK sink, IW 3 segments, initial RTO
# 3 s (ns-2's rtxcur_init_ default), the window not limiting (window_ raised).
Agent/TCP set windowInit_ 3
Agent/TCP set window_ 10000
Agent/TCP set packetSize_ $segment

# The qdiscs of the study on the bottleneck; the buffer holds 100 packets everywhere.
proc bottleneck_queue {qdisc} {
    switch $qdisc {
        codel { return CoDel }
        sfq_codel { return sfqCoDel }
        droptail { return DropTail }
        pie { return PIE }
        pie_thresh {
            # "PIEthresh": a 5-packet dequeue threshold.
            Queue/PIE set dq_threshold_ [expr {5 * 1000}]
            return PIE
        }
        pie_update {
            # "PIEupdate": a 60 ms update interval.
            Queue/PIE set tUpdate_ 0.06
            return PIE
        }
        hred - hred_aggressive {
            # Harsh RED: th_min 3, th_max 40 packets, max_p 0.65, w_q 0.02 (aggressive 0.04);
            # packet mode (queue_in_bytes_ and bytes_ off), the rest ns-2's defaults.
            Queue/RED set thresh_ 3
            Queue/RED set maxthresh_ 40
            Queue/RED set linterm_ [expr {1 / 0.65}]
            Queue/RED set q_weight_ [expr {$qdisc eq "hred" ? 0.02 : 0.04}]
            Queue/RED set queue_in_bytes_ false
            Queue/RED set bytes_ false
            return RED
        }
        default { error "unknown qdisc $qdisc" }
    }
}

set ns [new Simulator]
$defaultRNG seed $seed
set server [$ns node]
set router [$ns node]
set client [$ns node]
$ns duplex-link $server $router 100Mb ${rest_ms}ms DropTail
$ns simplex-link $router $client 2Mb 70ms [bottleneck_queue $qdisc]
$ns simplex-link $client $router 2Mb 70ms DropTail
$ns queue-limit $router $client 100
$ns queue-limit $client $router 100
$ns queue-limit $server $router 1000
$ns queue-limit $router $server 1000
set tf [open $trace_file w]
$ns trace-queue $router $client $tf

set start(0) 0.0
set start(1) $offset
set bytes [expr {360000 / $n}]
set flows {}
foreach g {0 1} {
    for {set i 0} {$i < $n} {incr i} {
        set tcp [new Agent/TCP/Sack1]
        set sink [new Agent/TCPSink/Sack1/DelAck]
        $tcp set fid_ [expr {$g * $n + $i}]
        $ns attach-agent $server $tcp
        $ns attach-agent $client $sink
        $ns connect $tcp $sink
        set ftp [new Application/FTP]
        $ftp attach-agent $tcp
        $ns at $start($g) "$ftp send $bytes"
        set group($tcp) $g
        set done($tcp) -1
        lappend flows $tcp
    }
}

Agent/TCP instproc done {} {
    global ns done
    set done($self) [$ns now]
}

proc finish {} {
    global flows group start done tf
    close $tf
    foreach f $flows {
        puts "flow $group($f) [$f set fid_] $start($group($f)) $done($f)"
    }
    exit 0
}
$ns at 60.0 finish
$ns run
