//! The 🌐 buttons beside the fields of sign-in, sign-up, first run and the settings forms
//! (spec/07 §13.1, Rails' TranslationsHelper): a popup saying what the field asks for in seven
//! languages, for someone who does not read the English label. The sentences are Rails' own.

use crate::views::{self, Out};

/// What a field asks for.
#[derive(Clone, Copy)]
pub enum Phrase {
    EmailAddress,
    Password,
    ChangePassword,
    YourName,
    AccountName,
    RoomName,
    Bio,
}

/// The languages, by flag, in the order the popup lists them.
const FLAGS: [&str; 7] = ["🇺🇸", "🇪🇸", "🇫🇷", "🇮🇳", "🇩🇪", "🇧🇷", "🇯🇵"];

/// `phrase` in each language of `FLAGS`, same order.
fn sentences(phrase: Phrase) -> [&'static str; 7] {
    match phrase {
        Phrase::EmailAddress => [
            "Enter your email address",
            "Introduce tu correo electrónico",
            "Entrez votre adresse courriel",
            "अपना ईमेल पता दर्ज करें",
            "Geben Sie Ihre E-Mail-Adresse ein",
            "Insira seu endereço de email",
            "メールアドレスを入力してください",
        ],
        Phrase::Password => [
            "Enter your password",
            "Introduce tu contraseña",
            "Saisissez votre mot de passe",
            "अपना पासवर्ड दर्ज करें",
            "Geben Sie Ihr Passwort ein",
            "Insira sua senha",
            "パスワードを入力してください",
        ],
        Phrase::ChangePassword => [
            "Change password",
            "Cambiar contraseña",
            "Changer le mot de passe",
            "पासवर्ड बदलें",
            "Passwort ändern",
            "Alterar senha",
            "パスワードを変更",
        ],
        Phrase::YourName => [
            "Enter your name",
            "Introduce tu nombre",
            "Entrez votre nom",
            "अपना नाम दर्ज करें",
            "Geben Sie Ihren Namen ein",
            "Insira seu nome",
            "お名前を入力してください",
        ],
        Phrase::AccountName => [
            "Name this account",
            "Nombre de esta cuenta",
            "Nommez ce compte",
            "इस खाते का नाम दें",
            "Benennen Sie dieses Konto",
            "Dê um nome a essa conta",
            "アカウントに名前を付ける",
        ],
        Phrase::RoomName => [
            "Name the room",
            "Nombrar la sala",
            "Nommez la salle",
            "कमरे का नाम दें",
            "Geben Sie dem Raum einen Namen",
            "Dê um nome a essa sala",
            "ルームに名前を付ける",
        ],
        Phrase::Bio => [
            "Enter a few words about yourself.",
            "Ingresa algunas palabras sobre ti mismo.",
            "Saisissez quelques mots à propos de vous-même.",
            "अपने बारे में कुछ शब्द लिखें.",
            "Geben Sie ein paar Worte über sich selbst ein.",
            "Insira alguma palavras sobre você.",
            "ご自分について簡単に記入してください。",
        ],
    }
}

/// Writes the popup for `phrase` (layouts/translation.html).
pub fn button(phrase: Phrase, o: &mut Out<'_>) {
    views::layouts::translation::render(&Popup(phrase), o);
}

struct Popup(Phrase);

impl views::layouts::translation::View for Popup {
    fn languages(&self, o: &mut Out<'_>) {
        for (flag, sentence) in FLAGS.iter().zip(sentences(self.0)) {
            o.static_bytes(b"<dt>");
            o.text(flag);
            o.static_bytes(b"</dt><dd>");
            o.text(sentence);
            o.static_bytes(b"</dd>");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_popup_lists_seven_languages_escaped() {
        let mut html = Vec::new();
        button(Phrase::EmailAddress, &mut Out::new(&mut html));
        let html = String::from_utf8(html).unwrap();
        assert!(html.starts_with("<details"), "{html}");
        assert_eq!(html.matches("<dt>").count(), 7);
        assert!(html.contains("<dt>🇯🇵</dt><dd>メールアドレスを入力してください</dd>"), "{html}");
        assert!(html.contains("data-controller=\"popup\""));
    }
}
