# Prints the ns version and which of the classes the validation uses this binary has.
# Run: PREFIX/bin/ns validation/ns2/modules.tcl
source [file join [file dirname [info script]] tcl defaults.tcl]
set ns [new Simulator]  ;# PIE arms its update timer when created
puts "ns-2 version [ns-version]"
set classes {
    Queue/DropTail Queue/RED Queue/CoDel Queue/sfqCoDel Queue/PIE Queue/SFQ Queue/DRR Queue/FQ
    Agent/TCP/Sack1 Agent/TCP/Newreno Agent/TCP/Linux Agent/TCPSink/Sack1/DelAck
    Agent/TCP/Vegas Agent/TCP/LEDBAT Agent/TCP/LP Agent/TCP/Nice
}
foreach cls $classes {
    if {[catch {new $cls} obj]} {
        puts [format "  %-28s missing" $cls]
    } else {
        puts [format "  %-28s yes" $cls]
        delete $obj
    }
}
# RED's variants are switches of Queue/RED (queue/red.cc): print them with their defaults.
foreach v {gentle_ adaptive_ wait_ queue_in_bytes_ bytes_ mean_pktsize_} {
    puts [format "  Queue/RED %-18s default %s" $v [Queue/RED set $v]]
}
# Agent/TCP/Linux runs the Linux congestion-control modules compiled into ns-2.35
# (tcp/linux/src): asking for one it does not have makes it print the list it has.
puts "Agent/TCP/Linux congestion-control modules (select_ca):"
[new Agent/TCP/Linux] select_ca none
