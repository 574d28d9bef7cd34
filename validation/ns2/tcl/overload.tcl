# A constant overload into one queue: CBR/UDP at twice the 2 Mb/s link rate, 1500-byte packets
# for checking a queue module's drop schedule against its algorithm (check_modules.py).
#   ns overload.tcl QUEUE TRACE [DURATION_S]      (QUEUE: CoDel, sfqCoDel, ...)
source [file join [file dirname [info script]] defaults.tcl]
lassign $argv qtype trace_file duration
if {$duration eq ""} { set duration 3.0 }
set ns [new Simulator]
set a [$ns node]
set b [$ns node]
set c [$ns node]
$ns duplex-link $a $b 100Mb 1ms DropTail
$ns simplex-link $b $c 2Mb 10ms $qtype
$ns simplex-link $c $b 2Mb 10ms DropTail
$ns queue-limit $b $c 10000
set tf [open $trace_file w]
$ns trace-queue $b $c $tf
set udp [new Agent/UDP]
set sink [new Agent/Null]
$ns attach-agent $a $udp
$ns attach-agent $c $sink
$ns connect $udp $sink
set cbr [new Application/Traffic/CBR]
$cbr attach-agent $udp
$udp set packetSize_ 1500
$cbr set packetSize_ 1500
$cbr set rate_ 4Mb
$ns at 0.0 "$cbr start"
$ns at $duration "close $tf; exit 0"
$ns run
