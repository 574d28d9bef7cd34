//! Congestion controllers behind one trait.
