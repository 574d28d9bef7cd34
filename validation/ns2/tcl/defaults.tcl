# Defaults of the queue classes that modules/ adds to ns-2.35 (ns-2 warns about a bound
# variable without one). CoDel and sfqCoDel: the modules' published 5 ms target and 100 ms
# interval; sfqCoDel's switches off (modules/sfqcodel.cc). PIE: the parameters
# transients2014 gives for its 2013 PIE (delay_ref 20 ms, alpha 0.125, beta 1.25, max_burst
# 100 ms, t_update 30 ms, dq_threshold 10 packets), with the published module's 1000-byte mean
# packet as the unit of the byte counts (dq_threshold_ 10000, as every public ns-2 PIE script
# sets it; the queue limit is qlim_ * mean_pktsize_).
foreach cls {Queue/CoDel Queue/sfqCoDel} {
    $cls set target_ 0.005
    $cls set interval_ 0.1
}
Queue/sfqCoDel set fresh_below_ 0
Queue/sfqCoDel set clear_on_empty_ 0
Queue/sfqCoDel set empty_below_ 0
Queue/sfqCoDel set last_below_ 0
Queue/sfqCoDel set plain_reentry_ 0
Queue/PIE set a_ 0.125
Queue/PIE set b_ 1.25
Queue/PIE set tUpdate_ 0.03
Queue/PIE set qdelay_ref_ 0.02
Queue/PIE set burst_allowance_ 0.1
Queue/PIE set mean_pktsize_ 1000
Queue/PIE set dq_threshold_ 10000

# One-change runs: each "Class/var=value" argument sets a class default before anything is
# created (e.g. Queue/RED/gentle_=false).
proc set_class_defaults {pairs} {
    foreach kv $pairs {
        lassign [split $kv =] path value
        set i [string last / $path]
        [string range $path 0 [expr {$i - 1}]] set [string range $path [expr {$i + 1}] end] $value
    }
}
