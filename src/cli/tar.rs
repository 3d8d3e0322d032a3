//! The POSIX ustar format, as much of it as a backup needs: regular files and directories with
//! names up to 255 bytes, sizes up to 8 GiB. `tar -xf` reads what we write, and we read what
//! `tar -cf` writes of such files (other entry types are skipped).

use std::io::{self, Read, Write};

const BLOCK: usize = 512;

pub struct Writer<W: Write> {
    out: W,
}

impl<W: Write> Writer<W> {
    pub fn new(out: W) -> Writer<W> {
        Writer { out }
    }

    pub fn dir(&mut self, name: &str, mtime: u64) -> io::Result<()> {
        let header = header(&format!("{}/", name.trim_end_matches('/')), 0o700, 0, mtime, b'5')?;
        self.out.write_all(&header)
    }

    /// Appends a file of exactly `size` bytes read from `data`.
    pub fn file(&mut self, name: &str, mode: u32, size: u64, mtime: u64, data: &mut impl Read) -> io::Result<()> {
        self.out.write_all(&header(name, mode, size, mtime, b'0')?)?;
        let copied = io::copy(&mut data.take(size), &mut self.out)?;
        if copied != size {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, format!("{name} shrank while it was copied")));
        }
        self.pad(size)
    }

    /// The two zero blocks that end an archive; returns the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.write_all(&[0u8; 2 * BLOCK])?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn pad(&mut self, size: u64) -> io::Result<()> {
        let rem = (size % BLOCK as u64) as usize;
        if rem != 0 {
            self.out.write_all(&[0u8; BLOCK][..BLOCK - rem])?;
        }
        Ok(())
    }
}

fn header(name: &str, mode: u32, size: u64, mtime: u64, kind: u8) -> io::Result<[u8; BLOCK]> {
    let mut h = [0u8; BLOCK];
    let (prefix, base) = split_name(name)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("{name}: too long for a tar entry")))?;
    h[..base.len()].copy_from_slice(base.as_bytes());
    octal(&mut h[100..108], u64::from(mode & 0o7777));
    octal(&mut h[108..116], 0);
    octal(&mut h[116..124], 0);
    octal(&mut h[124..136], size);
    octal(&mut h[136..148], mtime);
    h[156] = kind;
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[345..345 + prefix.len()].copy_from_slice(prefix.as_bytes());
    h[148..156].fill(b' ');
    let sum: u64 = h.iter().map(|&b| u64::from(b)).sum();
    octal(&mut h[148..155], sum);
    Ok(h)
}

/// Splits `name` into ustar's prefix (≤ 155) and name (≤ 100) fields at a slash.
fn split_name(name: &str) -> Option<(&str, &str)> {
    if name.len() <= 100 {
        return Some(("", name));
    }
    let cut = name[..name.len().min(156)].rfind('/')?;
    let (prefix, base) = (&name[..cut], &name[cut + 1..]);
    (prefix.len() <= 155 && base.len() <= 100 && !base.is_empty()).then_some((prefix, base))
}

/// Writes `v` as zero-padded octal filling `field` but its last byte, which is NUL.
fn octal(field: &mut [u8], mut v: u64) {
    let n = field.len() - 1;
    for i in (0..n).rev() {
        field[i] = b'0' + (v & 7) as u8;
        v >>= 3;
    }
    field[n] = 0;
}

/// One regular file of an archive being read.
pub struct Entry {
    pub name: String,
    pub size: u64,
}

pub struct Reader<R: Read> {
    input: R,
    /// Bytes of the current entry's data (and padding) not consumed yet.
    skip: u64,
}

impl<R: Read> Reader<R> {
    pub fn new(input: R) -> Reader<R> {
        Reader { input, skip: 0 }
    }

    /// The next regular file, or `None` at the end. Its data must be read with `data` before
    /// asking for the next one (or is skipped).
    pub fn next(&mut self) -> io::Result<Option<Entry>> {
        loop {
            io::copy(&mut (&mut self.input).take(self.skip), &mut io::sink())?;
            self.skip = 0;
            let mut h = [0u8; BLOCK];
            if let Err(e) = self.input.read_exact(&mut h) {
                return if e.kind() == io::ErrorKind::UnexpectedEof { Ok(None) } else { Err(e) };
            }
            if h.iter().all(|&b| b == 0) {
                return Ok(None);
            }
            let bad = |why: &str| io::Error::new(io::ErrorKind::InvalidData, format!("not a tar archive: {why}"));
            let stored = parse_octal(&h[148..156]).ok_or_else(|| bad("checksum field"))?;
            let mut sum: u64 = h.iter().map(|&b| u64::from(b)).sum();
            sum = sum - h[148..156].iter().map(|&b| u64::from(b)).sum::<u64>() + 8 * u64::from(b' ');
            if sum != stored {
                return Err(bad("header checksum"));
            }
            let size = parse_octal(&h[124..136]).ok_or_else(|| bad("size field"))?;
            self.skip = size.div_ceil(BLOCK as u64) * BLOCK as u64;
            if !matches!(h[156], b'0' | 0) {
                continue;
            }
            let field = |r: std::ops::Range<usize>| {
                let f = &h[r];
                String::from_utf8_lossy(&f[..f.iter().position(|&b| b == 0).unwrap_or(f.len())]).into_owned()
            };
            let (base, prefix) = (field(0..100), if &h[257..262] == b"ustar" { field(345..500) } else { String::new() });
            let name = if prefix.is_empty() { base } else { format!("{prefix}/{base}") };
            return Ok(Some(Entry { name, size }));
        }
    }

    /// Copies the current entry's data to `out`.
    pub fn data(&mut self, entry: &Entry, out: &mut impl Write) -> io::Result<()> {
        let copied = io::copy(&mut (&mut self.input).take(entry.size), out)?;
        if copied != entry.size {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, format!("{}: archive ends inside it", entry.name)));
        }
        self.skip -= entry.size;
        Ok(())
    }
}

fn parse_octal(f: &[u8]) -> Option<u64> {
    let digits: Vec<u8> = f.iter().copied().skip_while(|&b| b == b' ').take_while(|&b| (b'0'..=b'7').contains(&b)).collect();
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |v, &d| v.checked_mul(8).map(|v| v + u64::from(d - b'0')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_with_long_names_and_padding() {
        let long = format!("{}/{}", "d".repeat(120), "f".repeat(90));
        let mut w = Writer::new(Vec::new());
        w.dir("storage", 1).unwrap();
        w.file("storage/a.txt", 0o600, 3, 1, &mut &b"abc"[..]).unwrap();
        w.file(&long, 0o644, 0, 1, &mut &b""[..]).unwrap();
        let big = vec![7u8; 1300];
        w.file("big", 0o600, 1300, 1, &mut &big[..]).unwrap();
        let bytes = w.finish().unwrap();
        assert_eq!(bytes.len() % BLOCK, 0);
        let mut r = Reader::new(&bytes[..]);
        let mut got = Vec::new();
        while let Some(e) = r.next().unwrap() {
            let mut data = Vec::new();
            r.data(&e, &mut data).unwrap();
            got.push((e.name, data));
        }
        assert_eq!(got, vec![("storage/a.txt".to_string(), b"abc".to_vec()), (long, Vec::new()), ("big".into(), big)]);
    }

    #[test]
    fn refuses_names_that_do_not_fit_and_corrupt_headers() {
        assert!(header(&"x".repeat(101), 0, 0, 0, b'0').is_err());
        let mut w = Writer::new(Vec::new());
        w.file("a", 0o600, 1, 0, &mut &b"z"[..]).unwrap();
        let mut bytes = w.finish().unwrap();
        bytes[0] = b'b';
        assert!(Reader::new(&bytes[..]).next().is_err(), "checksum");
        // A truncated archive is an error while reading its data.
        let mut w = Writer::new(Vec::new());
        w.file("a", 0o600, 600, 0, &mut &[1u8; 600][..]).unwrap();
        let bytes = w.finish().unwrap();
        let mut r = Reader::new(&bytes[..700]);
        let e = r.next().unwrap().unwrap();
        assert!(r.data(&e, &mut Vec::new()).is_err());
    }
}
