//! A small, strict `.npy` (format 1.0/2.0/3.0) reader and 1.0 writer for
//! the element kinds of `.gir`: little-endian, C order, no object arrays.

use glow_ir::{ElemKind, Type};

/// The numpy dtype descriptor of an element kind (16-bit floats: `<f2`;
/// bfloat16 has none and is stored as its bits, `<u2`).
pub fn descr(kind: ElemKind) -> &'static str {
    match kind {
        ElemKind::Float => "<f4",
        ElemKind::Float64 => "<f8",
        ElemKind::Float16 => "<f2",
        ElemKind::BFloat16 => "<u2",
        ElemKind::Int8Q { .. } | ElemKind::Int8 => "|i1",
        ElemKind::UInt8Q { .. } | ElemKind::UInt8 | ElemKind::Fused(_) => "|u1",
        ElemKind::Int16Q { .. } => "<i2",
        ElemKind::Int32Q { .. } | ElemKind::Index32 => "<i4",
        ElemKind::Index64 => "<i8",
        ElemKind::Bool => "|b1",
    }
}

/// The bytes of a `.npy` file holding `data` (raw little-endian elements) as `ty`.
pub fn write(ty: &Type, data: &[u8]) -> Vec<u8> {
    let shape: Vec<String> = ty.dims.iter().map(|d| d.to_string()).collect();
    let shape = if shape.len() == 1 {
        format!("({},)", shape[0])
    } else {
        format!("({})", shape.join(", "))
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
        descr(ty.elem),
        shape
    );
    // Magic (6) + version (2) + length (2) + header + '\n', padded to 64.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

/// A parsed `.npy`: descriptor, shape and raw data.
#[derive(Debug, Clone, PartialEq)]
pub struct Npy {
    pub descr: String,
    pub shape: Vec<u64>,
    pub data: Vec<u8>,
}

/// Parses a `.npy` file; errors say what is wrong.
pub fn read(bytes: &[u8]) -> Result<Npy, String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("not a .npy file (bad magic)".into());
    }
    let (hlen, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let header = bytes
        .get(start..start + hlen)
        .ok_or("truncated .npy header")?;
    let header = std::str::from_utf8(header).map_err(|_| "the .npy header is not text")?;
    let descr = field(header, "descr")
        .map(|s| s.trim().trim_matches(|c| c == '\'' || c == '"').to_string())
        .ok_or("the .npy header has no 'descr'")?;
    let fortran = field(header, "fortran_order").map(str::trim);
    if fortran == Some("True") {
        return Err("Fortran-order .npy arrays are not supported".into());
    }
    let shape_text = field(header, "shape").ok_or("the .npy header has no 'shape'")?;
    let shape_text = shape_text.trim().trim_start_matches('(');
    let shape_text = shape_text.split(')').next().unwrap_or("");
    let mut shape = Vec::new();
    for part in shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        shape.push(
            part.parse::<u64>()
                .map_err(|_| format!("bad .npy shape entry `{part}`"))?,
        );
    }
    Ok(Npy {
        descr,
        shape,
        data: bytes[start + hlen..].to_vec(),
    })
}

/// The text after `'key':` up to the next top-level comma.
fn field<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let pat = format!("'{key}':");
    let at = header.find(&pat)? + pat.len();
    let rest = &header[at..];
    let mut depth = 0i32;
    for (i, c) in rest.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' | '}' if depth == 0 => return Some(&rest[..i]),
            _ => {}
        }
    }
    Some(rest)
}

/// Checks that a `.npy` holds exactly a tensor of `ty` (a rank-0 array
/// matches `<1>`) and returns its bytes.
pub fn expect(npy: &Npy, ty: &Type) -> Result<Vec<u8>, String> {
    let want = descr(ty.elem);
    let same = npy.descr == want
        || (want.starts_with('|') && npy.descr[1..] == want[1..] && npy.descr.len() == 3);
    if !same {
        return Err(format!(
            "has dtype '{}', but `{ty}` needs '{want}'",
            npy.descr
        ));
    }
    // A rank-0 array fills a one-element `<1>` (the IR's form of a scalar).
    let scalar = npy.shape.is_empty() && ty.dims == [1];
    if npy.shape != ty.dims && !scalar {
        return Err(format!(
            "has shape {:?}, but `{ty}` needs {:?}",
            npy.shape, ty.dims
        ));
    }
    if npy.data.len() as u64 != ty.bytes() {
        return Err(format!(
            "has {} data bytes, but `{ty}` needs {}",
            npy.data.len(),
            ty.bytes()
        ));
    }
    Ok(npy.data.clone())
}

/// A file name for a tensor name: a name made only of `[A-Za-z0-9._-]` is
/// kept as it is (users look for `y_incl.npy`); any other byte is written
/// `%XX` in hex, as in URLs. `%` is never kept, so the mapping is injective.
/// The names `.` and `..` and the empty name are escaped too, since they are
/// not file names of their own.
pub fn file_stem(name: &str) -> String {
    if name.is_empty() {
        return "%".to_string();
    }
    let mut out = String::new();
    let whole_dots = name == "." || name == "..";
    for b in name.bytes() {
        if (b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.') && !whole_dots {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The longest file name most file systems take (`NAME_MAX`).
pub const MAX_FILE_NAME: usize = 255;

/// `<file_stem>.npy`, or, when that is longer than `MAX_FILE_NAME` bytes,
/// the stem's first 200 bytes, `~` and a 64-bit FNV-1a hash of the name in
/// hex. `~` never occurs in a stem, so shortened names cannot meet
/// unshortened ones; two long names sharing a prefix and a hash are
/// reported by the caller instead of overwriting each other.
pub fn file_name(name: &str) -> String {
    let stem = file_stem(name);
    if stem.len() + 4 <= MAX_FILE_NAME {
        return format!("{stem}.npy");
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    // The stem is ASCII, so any byte index is a char boundary.
    format!("{}~{h:016x}.npy", &stem[..200])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_shortened() {
        let long = "x".repeat(300);
        let f = file_name(&long);
        assert!(f.len() <= MAX_FILE_NAME, "{f}");
        assert!(f.starts_with(&"x".repeat(200)) && f.ends_with(".npy") && f.contains('~'));
        let other = format!("{}y", "x".repeat(299));
        assert_ne!(file_name(&other), f);
        assert_eq!(
            file_name(&"a".repeat(251)),
            format!("{}.npy", "a".repeat(251))
        );
        assert!(file_name(&"a".repeat(252)).contains('~'));
        assert!(!file_stem("a~b").contains('~'));
    }

    #[test]
    fn round_trip() {
        let ty = Type::float(&[2, 3]);
        let data: Vec<u8> = (0..24).collect();
        let bytes = write(&ty, &data);
        // The header pads to a multiple of 64; the 24 data bytes follow it.
        assert_eq!(bytes.len() % 64, 24);
        let npy = read(&bytes).expect("reads");
        assert_eq!(npy.shape, vec![2, 3]);
        assert_eq!(expect(&npy, &ty).expect("matches"), data);
        assert!(expect(&npy, &Type::float(&[3, 2])).is_err());
        let one = write(&Type::float(&[1]), &[0, 0, 128, 63]);
        let mut scalar = read(&one).expect("reads");
        scalar.shape.clear();
        assert!(expect(&scalar, &Type::float(&[1])).is_ok());
        assert!(expect(&scalar, &Type::float(&[1, 1])).is_err());
    }

    #[test]
    fn file_stems() {
        assert_eq!(file_stem("result"), "result");
        assert_eq!(file_stem("y_incl"), "y_incl");
        assert_eq!(file_stem("a.b-c_d"), "a.b-c_d");
        assert_eq!(file_stem("a/b"), "a%2Fb");
        assert_eq!(file_stem("a%2Fb"), "a%252Fb");
        assert_eq!(file_stem(".."), "%2E%2E");
        assert_eq!(file_stem(""), "%");
    }
}
