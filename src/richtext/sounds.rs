//! The built-in `/play <name>` sounds (spec/01 §7.4): each has `<name>.mp3` and either a line of
//! text or an image shown next to the play button.

pub struct Sound {
    pub name: &'static str,
    /// Text shown after the button, when the sound has no image.
    pub text: Option<&'static str>,
    /// Image asset under `sounds/` with its width and height, when it has one.
    pub image: Option<SoundImage>,
}

pub struct SoundImage {
    pub file: &'static str,
    pub width: u32,
    pub height: u32,
}

impl Sound {
    /// The audio asset name, `sounds/<name>.mp3` relative to the asset root.
    pub fn mp3(&self) -> String {
        format!("{}.mp3", self.name)
    }
}

const fn t(name: &'static str, text: &'static str) -> Sound {
    Sound { name, text: Some(text), image: None }
}

const fn i(name: &'static str, file: &'static str, width: u32, height: u32) -> Sound {
    Sound { name, text: None, image: Some(SoundImage { file, width, height }) }
}

/// All sounds, sorted by name.
pub static SOUNDS: [Sound; 56] = [
    i("56k", "56k.webp", 79, 33),
    t("ballmer", "developers!"),
    t("bell", "🔔"),
    t("bezos", "😆💭"),
    t("bueller", "anyone?"),
    t("butts", "👐 🚬"),
    i("clowntown", "clowntown.webp", 210, 150),
    t("cottoneyejoe", "🎶🙉🎶 "),
    t("crickets", "hears crickets chirping"),
    i("curb", "curb.webp", 150, 101),
    t("dadgummit", "dad gummit!! 🎣"),
    i("dangerzone", "dangerzone.webp", 157, 32),
    t("danielsan", "🎆 🏆 🎆"),
    i("deeper", "top.webp", 188, 80),
    i("donotwant", "donotwant.webp", 150, 150),
    i("drama", "drama.webp", 300, 16),
    t("flawless", "#flawless"),
    t("glados", "🤖💢"),
    t("gogogo", "Go, go, go!"),
    i("greatjob", "greatjob.webp", 79, 16),
    t("greyjoy", "😖🎺"),
    t("guarantee", "guarantees it 👌"),
    t("heygirl", "✨💁✨"),
    t("honk", "HONK"),
    t("horn", "🐶 ✂️ 🐱"),
    t("horror", "💀 💀 💀 💀 💀 💀 💀"),
    t("inconceivable", "doesn't think it means what you think it means…"),
    t("letitgo", "❄️👩❄️⛄️❄️"),
    t("live", "is DOING IT LIVE"),
    i("loggins", "loggins.webp", 200, 151),
    t("makeitso", "make it so 👉"),
    t("noooo", "👸💀😒"),
    i("nyan", "nyan.webp", 36, 15),
    t("ohmy", "raises an eyebrow 😏"),
    t("ohyeah", "isn't playing by the rules"),
    i("pushit", "pushit.webp", 104, 15),
    t("rimshot", "plays a rimshot"),
    t("rollout", "is rolling out 🚗"),
    i("rumble", "rumble.webp", 220, 150),
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
    i("what", "what.webp", 100, 131),
    t("whoomp", "👏‼️😎"),
    t("wups", "wups!"),
    i("yay", "yay.webp", 103, 50),
    i("yeah", "yeah.webp", 104, 15),
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
        assert!(SOUNDS.iter().all(|s| s.text.is_some() != s.image.is_some()));
        assert_eq!(find("deeper").and_then(|s| s.image.as_ref()).map(|i| i.file), Some("top.webp"));
    }

    #[test]
    fn play_detection() {
        assert_eq!(play_sound("/play tada").map(|s| s.name), Some("tada"));
        assert_eq!(play_sound("/play 56k").map(|s| s.text), Some(None));
        assert!(play_sound("/play tada ").is_none());
        assert!(play_sound("/play tada\n").is_none());
        assert!(play_sound(" /play tada").is_none());
        assert!(play_sound("/play nope").is_none());
        assert!(play_sound("/play ").is_none());
        assert!(play_sound("/playtada").is_none());
    }
}
