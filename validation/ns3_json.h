// The JSON value writers the ns-3 validation programs share (validation/*/*.cc print one JSON
// object per run for their run.py).
#pragma once

#include <iomanip>
#include <sstream>
#include <string>

namespace json
{

/// A string, quoted (the programs' strings need no escaping).
inline std::string
Q(const std::string& s)
{
    return "\"" + s + "\"";
}

/// A number with 10 significant digits.
inline std::string
Num(double v)
{
    std::ostringstream o;
    o << std::setprecision(10) << v;
    return o.str();
}

/// A number, or null when negative (not measured).
inline std::string
OptNum(double v)
{
    return v < 0 ? "null" : Num(v);
}

inline std::string
B(bool v)
{
    return v ? "true" : "false";
}

} // namespace json
