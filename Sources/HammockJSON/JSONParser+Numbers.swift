extension JSONParser {
    /// Parses a number per RFC 8259. Integers that fit in `Int` become `.integer`; everything else
    /// (fractions, exponents, integers too large for `Int`, and `-0`) becomes `.double`.
    mutating func parseNumber() throws(JSONParsingError) -> JSON {
        let start = position
        var isNegative = false
        if bytes[position] == UInt8(ascii: "-") {
            isNegative = true
            position += 1
        }
        guard position < bytes.count else { throw error(.invalidNumber, at: start) }

        // Integer part: "0" or [1-9][0-9]*, accumulated as a negative number so Int.min fits.
        var accumulator = 0
        var overflowed = false
        var significantDigits = 0
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
            if position < bytes.count, isDigit(bytes[position]) { throw error(.invalidNumber, at: start) }
        } else if isDigit(bytes[position]) {
            while position < bytes.count, isDigit(bytes[position]) {
                let digit = Int(bytes[position] &- UInt8(ascii: "0"))
                accumulate(digit, into: &accumulator, overflowed: &overflowed)
                significantDigits += 1
                position += 1
            }
        } else {
            throw error(.invalidNumber, at: start)
        }

        var isInteger = true
        // Fraction part.
        var fractionDigits = 0
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard position < bytes.count, isDigit(bytes[position]) else { throw error(.invalidNumber, at: start) }
            while position < bytes.count, isDigit(bytes[position]) {
                let digit = Int(bytes[position] &- UInt8(ascii: "0"))
                accumulate(digit, into: &accumulator, overflowed: &overflowed)
                fractionDigits += 1
                position += 1
            }
        }
        // Exponent part.
        var exponent = 0
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            var exponentIsNegative = false
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                exponentIsNegative = bytes[position] == UInt8(ascii: "-")
                position += 1
            }
            guard position < bytes.count, isDigit(bytes[position]) else { throw error(.invalidNumber, at: start) }
            while position < bytes.count, isDigit(bytes[position]) {
                if exponent < 100_000 { exponent = exponent * 10 + Int(bytes[position] &- UInt8(ascii: "0")) }
                position += 1
            }
            if exponentIsNegative { exponent = -exponent }
        }

        if isInteger && !overflowed {
            // `-0` is the one integer literal an Int cannot hold with its sign: a double keeps it.
            if isNegative { return accumulator == 0 ? .double(-0.0) : .integer(accumulator) }
            if accumulator != Int.min { return .integer(-accumulator) }
        }

        // Exact fast path (Clinger): the digits fit in a Double's 53-bit mantissa and the power of
        // ten is exactly representable, so one multiplication or division rounds correctly.
        let decimalExponent = exponent - fractionDigits
        if !overflowed, accumulator > -(1 << 53), decimalExponent >= -22, decimalExponent <= 22 {
            var value = Double(-accumulator)
            let scale = Self.powersOfTen[abs(decimalExponent)]
            value = decimalExponent < 0 ? value / scale : value * scale
            return .double(isNegative ? -value : value)
        }
        // Slow path: the standard library's correctly rounded conversion.
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw error(.invalidNumber, at: start) }
        return .double(value)
    }

    /// Appends a decimal digit to a negative accumulator, noting overflow instead of trapping.
    @inline(__always)
    func accumulate(_ digit: Int, into accumulator: inout Int, overflowed: inout Bool) {
        guard !overflowed else { return }
        let (times10, o1) = accumulator.multipliedReportingOverflow(by: 10)
        let (next, o2) = times10.subtractingReportingOverflow(digit)
        if o1 || o2 { overflowed = true } else { accumulator = next }
    }

    @inline(__always)
    func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]
}
