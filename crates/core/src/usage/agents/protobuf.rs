//! A protobuf wire-format walker, enough to read the few fields of an agent's stored protobuf
//! blobs without their `.proto` files (Antigravity ships none): the fields of one message in
//! order, as varints, length-delimited bytes (a nested message, a string or packed data, left to
//! the caller) and fixed 32/64-bit values. A malformed tag, a truncated value, a varint longer
//! than ten bytes, field number 0 or a group wire type (3, 4) ends the walk: the fields read
//! before it are kept, nothing after it is guessed at, and nothing panics.

/// One field's value, by wire type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1.
    Fixed64(u64),
    /// Wire type 2: a nested message, a string or packed values.
    Bytes(&'a [u8]),
    /// Wire type 5.
    Fixed32(u32),
}

/// The fields of one message, in the order written (see [`fields`]).
#[derive(Debug, Clone)]
pub struct Fields<'a> {
    rest: &'a [u8],
}

/// The fields of the message `buf`: `(field number, value)` pairs until the end or the first
/// malformed field.
pub fn fields(buf: &[u8]) -> Fields<'_> {
    Fields { rest: buf }
}

/// A base-128 varint at the start of `buf`, advancing it; `None` when truncated or longer than
/// the ten bytes a 64-bit value takes.
pub fn varint(buf: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for i in 0..10 {
        let (&byte, rest) = buf.split_first()?;
        *buf = rest;
        value |= u64::from(byte & 0x7f) << (i * 7);
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

fn take<'a>(buf: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if buf.len() < n {
        return None;
    }
    let (head, rest) = buf.split_at(n);
    *buf = rest;
    Some(head)
}

impl<'a> Fields<'a> {
    fn field(&mut self) -> Option<(u32, Value<'a>)> {
        let buf = &mut self.rest;
        let tag = varint(buf)?;
        let number = u32::try_from(tag >> 3).ok().filter(|n| *n != 0)?;
        let value = match tag & 7 {
            0 => Value::Varint(varint(buf)?),
            1 => Value::Fixed64(u64::from_le_bytes(take(buf, 8)?.try_into().ok()?)),
            2 => {
                let len = usize::try_from(varint(buf)?).ok()?;
                Value::Bytes(take(buf, len)?)
            }
            5 => Value::Fixed32(u32::from_le_bytes(take(buf, 4)?.try_into().ok()?)),
            _ => return None,
        };
        Some((number, value))
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = (u32, Value<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let f = self.field();
        if f.is_none() {
            self.rest = &[];
        }
        f
    }
}

/// A length-delimited value as text: valid UTF-8, trimmed, not empty.
pub fn text(bytes: &[u8]) -> Option<String> {
    let t = std::str::from_utf8(bytes).ok()?.trim();
    (!t.is_empty()).then(|| t.to_string())
}

#[cfg(test)]
pub(crate) mod encode {
    //! Encoders for building test blobs.

    pub fn varint(mut v: u64, out: &mut Vec<u8>) {
        while v >= 0x80 {
            out.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    pub fn field_varint(number: u32, v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        varint(u64::from(number) << 3, &mut out);
        varint(v, &mut out);
        out
    }

    pub fn field_bytes(number: u32, v: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        varint((u64::from(number) << 3) | 2, &mut out);
        varint(v.len() as u64, &mut out);
        out.extend_from_slice(v);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::encode::*;
    use super::*;

    #[test]
    fn walks_every_wire_type_in_order() {
        let mut b = field_varint(2, 300);
        b.extend(field_bytes(11, b"resp"));
        b.extend([(3 << 3) | 1]);
        b.extend(7u64.to_le_bytes());
        b.extend([(4 << 3) | 5]);
        b.extend(9u32.to_le_bytes());
        b.extend(field_varint(536_870_911, u64::MAX));
        let got: Vec<_> = fields(&b).collect();
        assert_eq!(
            got,
            [
                (2, Value::Varint(300)),
                (11, Value::Bytes(b"resp")),
                (3, Value::Fixed64(7)),
                (4, Value::Fixed32(9)),
                (536_870_911, Value::Varint(u64::MAX)),
            ]
        );
    }

    #[test]
    fn a_malformed_field_ends_the_walk_and_keeps_what_came_before() {
        let ok = field_varint(1, 5);
        for bad in [
            vec![0xff; 11],               // a varint tag longer than ten bytes
            vec![0x12, 0x05, b'a'],       // bytes longer than the buffer
            vec![0x0b],                   // group start (wire type 3)
            vec![0x00, 0x01],             // field number 0
            vec![0x09, 1, 2, 3],          // truncated fixed64
            vec![0x12, 0xff, 0xff, 0xff], // truncated length
        ] {
            let mut b = ok.clone();
            b.extend(&bad);
            b.extend(field_varint(2, 6));
            let got: Vec<_> = fields(&b).collect();
            assert_eq!(got, [(1, Value::Varint(5))], "{bad:?}");
        }
        assert_eq!(fields(&[]).count(), 0);
        assert_eq!(fields(&[0x08]).count(), 0, "a varint value missing");
    }

    #[test]
    fn text_is_trimmed_utf8_and_never_empty() {
        assert_eq!(text(b" gemini-3-pro \n").as_deref(), Some("gemini-3-pro"));
        assert_eq!(text(b"  "), None);
        assert_eq!(text(&[0xff, 0xfe]), None);
    }
}
