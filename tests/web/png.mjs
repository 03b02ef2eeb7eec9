// A small PNG decoder for the screenshots Chromium takes (8-bit RGB or
// RGBA, not interlaced), so the tests can look at pixels without a
// dependency.
import zlib from 'node:zlib';

export function decodePNG(buf) {
  const sig = '89504e470d0a1a0a';
  if (buf.subarray(0, 8).toString('hex') !== sig) throw new Error('not a PNG');
  let off = 8, width = 0, height = 0, depth = 0, type = 0, interlace = 0;
  const idat = [];
  while (off < buf.length) {
    const len = buf.readUInt32BE(off);
    const kind = buf.toString('latin1', off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    if (kind === 'IHDR') {
      width = data.readUInt32BE(0); height = data.readUInt32BE(4);
      depth = data[8]; type = data[9]; interlace = data[12];
    } else if (kind === 'IDAT') idat.push(data);
    else if (kind === 'IEND') break;
    off += 12 + len;
  }
  if (depth !== 8 || (type !== 2 && type !== 6) || interlace !== 0) {
    throw new Error(`unsupported PNG: depth ${depth}, color type ${type}, interlace ${interlace}`);
  }
  const bpp = type === 6 ? 4 : 3;
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * bpp;
  const px = Buffer.alloc(width * height * 4);
  let prev = Buffer.alloc(stride);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)];
    const line = Buffer.from(raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)));
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? line[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0;
      let v = line[i];
      switch (f) {
        case 1: v += a; break;
        case 2: v += b; break;
        case 3: v += (a + b) >> 1; break;
        case 4: {
          const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
          v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
      }
      line[i] = v & 0xff;
    }
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      px[o] = line[x * bpp]; px[o + 1] = line[x * bpp + 1]; px[o + 2] = line[x * bpp + 2];
      px[o + 3] = bpp === 4 ? line[x * bpp + 3] : 255;
    }
    prev = line;
  }
  return { width, height, px };
}

export function hex(s) {
  const v = parseInt(s.replace('#', ''), 16);
  return [(v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff];
}

// count counts the pixels within tol (per channel) of rgb inside the
// rectangle {x, y, width, height} (CSS pixels = image pixels at scale 1).
export function count(img, rgb, tol = 12, r = { x: 0, y: 0, width: img.width, height: img.height }) {
  let n = 0;
  const x0 = Math.max(0, Math.floor(r.x)), y0 = Math.max(0, Math.floor(r.y));
  const x1 = Math.min(img.width, Math.ceil(r.x + r.width)), y1 = Math.min(img.height, Math.ceil(r.y + r.height));
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const o = (y * img.width + x) * 4;
      if (Math.abs(img.px[o] - rgb[0]) <= tol && Math.abs(img.px[o + 1] - rgb[1]) <= tol && Math.abs(img.px[o + 2] - rgb[2]) <= tol) n++;
    }
  }
  return n;
}

// colors counts the distinct colors (quantized) in the image: a blank page has one or two.
export function colors(img) {
  const seen = new Set();
  for (let o = 0; o < img.px.length; o += 4 * 7) {
    seen.add((img.px[o] >> 3) << 10 | (img.px[o + 1] >> 3) << 5 | (img.px[o + 2] >> 3));
  }
  return seen.size;
}

// reddish counts the pixels inside r whose red clearly dominates (the error
// bar's tinted background, border and icon).
export function reddish(img, r) {
  let n = 0;
  for (let y = Math.max(0, Math.floor(r.y)); y < Math.min(img.height, r.y + r.height); y++) {
    for (let x = Math.max(0, Math.floor(r.x)); x < Math.min(img.width, r.x + r.width); x++) {
      const o = (y * img.width + x) * 4;
      if (img.px[o] - img.px[o + 1] > 15 && img.px[o] - img.px[o + 2] > 15) n++;
    }
  }
  return n;
}
