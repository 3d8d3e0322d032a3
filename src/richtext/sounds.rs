//! The built-in `/play <name>` sounds (spec/01 §7.4, 08 §10): the names and the caption shown
//! next to the play button. There are no audio or image files: the browser synthesizes each
//! sound from a recipe (`public/js/lib/synth.js`), and the sounds that Campfire shows as an
//! image get an emoji caption of ours instead, so nothing on the page points at a missing file.

pub struct Sound {
    pub name: &'static str,
    /// Caption shown after the play button (plain text, escaped on output).
    pub text: &'static str,
}

const fn t(name: &'static str, text: &'static str) -> Sound {
    Sound { name, text }
}

/// All sounds, sorted by name.
pub static SOUNDS: [Sound; 56] = [
    t("56k", "📠 connecting…"),
    t("ballmer", "developers!"),
    t("bell", "🔔"),
    t("bezos", "😆💭"),
    t("bueller", "anyone?"),
    t("butts", "👐 🚬"),
    t("clowntown", "🤡🎪"),
    t("cottoneyejoe", "🎶🙉🎶 "),
    t("crickets", "hears crickets chirping"),
    t("curb", "🎬 🎷"),
    t("dadgummit", "dad gummit!! 🎣"),
    t("dangerzone", "✈️ DANGER ZONE ✈️"),
    t("danielsan", "🎆 🏆 🎆"),
    t("deeper", "🌀 goes deeper"),
    t("donotwant", "🙅 does not want"),
    t("drama", "😱 dun dun duuun"),
    t("flawless", "#flawless"),
    t("glados", "🤖💢"),
    t("gogogo", "Go, go, go!"),
    t("greatjob", "👏 great job!"),
    t("greyjoy", "😖🎺"),
    t("guarantee", "guarantees it 👌"),
    t("heygirl", "✨💁✨"),
    t("honk", "HONK"),
    t("horn", "🐶 ✂️ 🐱"),
    t("horror", "💀 💀 💀 💀 💀 💀 💀"),
    t("inconceivable", "doesn't think it means what you think it means…"),
    t("letitgo", "❄️👩❄️⛄️❄️"),
    t("live", "is DOING IT LIVE"),
    t("loggins", "🕶️ 🎸"),
    t("makeitso", "make it so 👉"),
    t("noooo", "👸💀😒"),
    t("nyan", "🐱🌈"),
    t("ohmy", "raises an eyebrow 😏"),
    t("ohyeah", "isn't playing by the rules"),
    t("pushit", "💪 push it"),
    t("rimshot", "plays a rimshot"),
    t("rollout", "is rolling out 🚗"),
    t("rumble", "🥊 let's get ready to rumble"),
    t("sax", "🌇🎷🎶"),
    t("secret", "found a secret area 🔑"),
    t("sexyback", "🔞"),
    t("story", "and now you know…"),
    t("tada", "plays a fanfare 🎏"),
    t("tmyk", "✨ ⭐️ The More You Know ✨ ⭐️"),
    t("totes", "😁👍"),
    t("trololo", "трололо"),
    t("trombone", "plays a sad trombone"),
    t("unix", "knows this 💻"),
    t("vuvuzela", "======<() ~ ♪ ~♫"),
    t("what", "❓ what?"),
    t("whoomp", "👏‼️😎"),
    t("wups", "wups!"),
    t("yay", "🎉 yay!"),
    t("yeah", "😎 yeah"),
    t("yodel", "📣🗻🙉"),
];

/// The sound called `name`.
pub fn find(name: &str) -> Option<&'static Sound> {
    SOUNDS.binary_search_by(|s| s.name.cmp(name)).ok().and_then(|i| SOUNDS.get(i))
}

/// The sound a message's plain text asks for: the whole text is `/play <name>` (name = one or
/// more ASCII word characters) and `<name>` is a built-in sound.
pub fn play_sound(plain_text: &str) -> Option<&'static Sound> {
    let name = plain_text.strip_prefix("/play ")?;
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    find(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_complete() {
        assert!(SOUNDS.windows(2).all(|w| w[0].name < w[1].name));
        assert!(SOUNDS.iter().all(|s| !s.text.trim().is_empty()));
        assert_eq!(find("trombone").map(|s| s.text), Some("plays a sad trombone"));
    }

    #[test]
    fn play_detection() {
        assert_eq!(play_sound("/play tada").map(|s| s.name), Some("tada"));
        assert_eq!(play_sound("/play 56k").map(|s| s.name), Some("56k"));
        assert!(play_sound("/play tada ").is_none());
        assert!(play_sound("/play tada\n").is_none());
        assert!(play_sound(" /play tada").is_none());
        assert!(play_sound("/play nope").is_none());
        assert!(play_sound("/play ").is_none());
        assert!(play_sound("/playtada").is_none());
    }
}
