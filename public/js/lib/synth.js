// synth.js: the /play sounds, synthesized with the Web Audio API from small recipes (no audio
// files). A recipe schedules oscillators and noise bursts from a start time `t` (seconds).
// Sounds without a recipe of their own (mostly spoken quotes) get a generic chime; their caption
// on the page says what they are.

let context = null

// The page's one AudioContext, made on first use. Browsers keep it suspended until the page has
// had a user gesture; `resume()` succeeds from a click.
export function audioContext() {
  const Context = window.AudioContext || window.webkitAudioContext
  if (!context && Context) context = new Context()
  return context
}

// Whether a sound may start without a click right now (browser autoplay rules): the page must
// have had a user gesture, or the context be running already.
export function mayAutoplay() {
  const ctx = audioContext()
  if (!ctx) return false
  return navigator.userActivation ? navigator.userActivation.hasBeenActive : ctx.state === "running"
}

// Plays the sound called `name` (an unknown name plays the chime).
export function playSound(name) {
  const ctx = audioContext()
  if (!ctx) return
  ctx.resume().catch(() => {})
  schedule(name, ctx, ctx.destination, ctx.currentTime + 0.02)
}

// Schedules the sound called `name` on any audio context (the page's, or an offline one that
// renders it to samples) into `destination`, starting at `t` seconds.
export function schedule(name, ctx, destination, t) {
  const out = ctx.createGain()
  out.gain.value = 0.5
  out.connect(destination)
  const recipe = RECIPES[name] || chime
  recipe({ ctx, out }, t)
}

// One oscillator note: `type` wave at `freq` Hz (gliding to `to`), `dur` seconds, quick attack and
// exponential decay; `vibrato` Hz of wobble; `cutoff` puts a low-pass filter in front.
function tone({ ctx, out }, t, { type = "sine", freq, to, dur, gain = 0.3, vibrato = 0, cutoff }) {
  const osc = ctx.createOscillator()
  const env = ctx.createGain()
  osc.type = type
  osc.frequency.setValueAtTime(freq, t)
  if (to) osc.frequency.exponentialRampToValueAtTime(to, t + dur)
  if (vibrato) {
    const lfo = ctx.createOscillator()
    const depth = ctx.createGain()
    lfo.frequency.value = 6
    depth.gain.value = vibrato
    lfo.connect(depth).connect(osc.frequency)
    lfo.start(t)
    lfo.stop(t + dur)
  }
  env.gain.setValueAtTime(0.0001, t)
  env.gain.exponentialRampToValueAtTime(gain, t + 0.01)
  env.gain.exponentialRampToValueAtTime(0.0001, t + dur)
  let node = osc.connect(env)
  if (cutoff) {
    const filter = ctx.createBiquadFilter()
    filter.type = "lowpass"
    filter.frequency.value = cutoff
    node = node.connect(filter)
  }
  node.connect(out)
  osc.start(t)
  osc.stop(t + dur + 0.05)
}

// A burst of white noise through a `filter` (BiquadFilter type) at `freq` Hz.
function noise({ ctx, out }, t, { dur, gain = 0.4, filter = "bandpass", freq = 1000, q = 1 }) {
  const length = Math.ceil(ctx.sampleRate * dur)
  const buffer = ctx.createBuffer(1, length, ctx.sampleRate)
  const data = buffer.getChannelData(0)
  for (let i = 0; i < length; i++) data[i] = Math.random() * 2 - 1
  const src = ctx.createBufferSource()
  const shape = ctx.createBiquadFilter()
  const env = ctx.createGain()
  src.buffer = buffer
  shape.type = filter
  shape.frequency.value = freq
  shape.Q.value = q
  env.gain.setValueAtTime(gain, t)
  env.gain.exponentialRampToValueAtTime(0.0001, t + dur)
  src.connect(shape).connect(env).connect(out)
  src.start(t)
}

// Notes one after another: [frequency, seconds] pairs.
function melody(a, t, notes, options) {
  for (const [freq, dur] of notes) {
    tone(a, t, { ...options, freq, dur: dur * 1.1 })
    t += dur
  }
}

const chime = (a, t) => [659, 988, 1319].forEach((freq, i) => tone(a, t + i * 0.09, { freq, dur: 1.2, gain: 0.2 }))

const bell = (a, t) => {
  tone(a, t, { freq: 880, dur: 2, gain: 0.3 })
  tone(a, t, { freq: 880 * 2.76, dur: 0.8, gain: 0.08 })
}

const trombone = (a, t) =>
  [[196, 0.35], [185, 0.35], [175, 0.35], [165, 1.3]].reduce((at, [freq, dur], i) => {
    tone(a, at, { type: "sawtooth", freq, to: freq * 0.97, dur, gain: 0.2, cutoff: 1200, vibrato: i === 3 ? 4 : 0 })
    return at + dur + 0.05
  }, t)

const rimshot = (a, t) => {
  tone(a, t, { freq: 180, to: 60, dur: 0.25, gain: 0.6 })
  noise(a, t + 0.2, { dur: 0.15, freq: 1800 })
  tone(a, t + 0.2, { type: "triangle", freq: 220, to: 120, dur: 0.1 })
  noise(a, t + 0.5, { dur: 0.9, filter: "highpass", freq: 7000, gain: 0.3 })
}

const tada = (a, t) => melody(a, t, [[523, 0.12], [659, 0.12], [784, 0.12], [1047, 1]], { type: "triangle", gain: 0.25 })

const crickets = (a, t) => {
  for (let group = 0; group < 4; group++) {
    for (let chirp = 0; chirp < 3; chirp++) {
      tone(a, t + group * 0.5 + chirp * 0.06, { freq: 4400, dur: 0.04, gain: 0.08 })
    }
  }
}

const honk = (a, t) => [0, 0.3].forEach((at) => tone(a, t + at, { type: "square", freq: 247, to: 233, dur: 0.22, gain: 0.15, cutoff: 1500 }))

const horn = (a, t) => [311, 370, 466].forEach((freq) => tone(a, t, { type: "square", freq, dur: 0.9, gain: 0.08, cutoff: 2000 }))

const vuvuzela = (a, t) => tone(a, t, { type: "sawtooth", freq: 233, dur: 2, gain: 0.15, vibrato: 3, cutoff: 1800 })

const rumble = (a, t) => noise(a, t, { dur: 2.5, filter: "lowpass", freq: 120, gain: 0.9 })

const drama = (a, t) => melody(a, t, [[294, 0.25], [277, 0.25], [233, 1.4]], { type: "sawtooth", gain: 0.2, cutoff: 1500 })

const modem = (a, t) => {
  melody(a, t, [[1375, 0.2], [2100, 0.2], [980, 0.3], [1650, 0.3]], { type: "square", gain: 0.05, cutoff: 3000 })
  noise(a, t + 1, { dur: 1, freq: 2000, gain: 0.15 })
}

const wups = (a, t) => melody(a, t, [[784, 0.12], [523, 0.3]], { type: "triangle", gain: 0.25 })

const secret = (a, t) => melody(a, t, [[784, 0.1], [988, 0.1], [1175, 0.1], [1568, 0.1], [1319, 0.1], [1568, 0.5]], { type: "square", gain: 0.07 })

const RECIPES = {
  "56k": modem, bell, crickets, dangerzone: horn, drama, honk, horn, horror: drama, noooo: drama,
  rimshot, rumble, secret, tada, danielsan: tada, yay: tada, greatjob: tada, trombone, greyjoy: trombone,
  vuvuzela, wups,
}
