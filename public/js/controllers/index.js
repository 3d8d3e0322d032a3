// index.js: registers every Stimulus controller; the identifier is the file name without
// _controller, underscores as dashes. Each import is a bare specifier of the import map in
// templates/layouts/application.html (fingerprinted URLs break relative imports).

import autoSubmitController from "controllers/auto_submit_controller"
import autocompleteController from "controllers/autocomplete_controller"
import badgeDotController from "controllers/badge_dot_controller"
import boostDeleteController from "controllers/boost_delete_controller"
import boostsFrameController from "controllers/boosts_frame_controller"
import composerController from "controllers/composer_controller"
import copyToClipboardController from "controllers/copy_to_clipboard_controller"
import dropTargetController from "controllers/drop_target_controller"
import elementRemovalController from "controllers/element_removal_controller"
import filterController from "controllers/filter_controller"
import formController from "controllers/form_controller"
import lightboxController from "controllers/lightbox_controller"
import localTimeController from "controllers/local_time_controller"
import maintainScrollController from "controllers/maintain_scroll_controller"
import messageActionsController from "controllers/message_actions_controller"
import messageOptionsController from "controllers/message_options_controller"
import messagesController from "controllers/messages_controller"
import notificationsController from "controllers/notifications_controller"
import popupController from "controllers/popup_controller"
import presenceController from "controllers/presence_controller"
import pwaInstallController from "controllers/pwa_install_controller"
import readRoomsController from "controllers/read_rooms_controller"
import refreshRoomController from "controllers/refresh_room_controller"
import replyController from "controllers/reply_controller"
import richAutocompleteController from "controllers/rich_autocomplete_controller"
import roomsListController from "controllers/rooms_list_controller"
import scrollIntoViewController from "controllers/scroll_into_view_controller"
import searchResultsController from "controllers/search_results_controller"
import sessionsController from "controllers/sessions_controller"
import softKeyboardController from "controllers/soft_keyboard_controller"
import sortedListController from "controllers/sorted_list_controller"
import soundController from "controllers/sound_controller"
import toggleClassController from "controllers/toggle_class_controller"
import turboFrameController from "controllers/turbo_frame_controller"
import turboStreamingController from "controllers/turbo_streaming_controller"
import typingNotificationsController from "controllers/typing_notifications_controller"
import uploadPreviewController from "controllers/upload_preview_controller"
import webShareController from "controllers/web_share_controller"

export function registerControllers(application) {
  application.register("auto-submit", autoSubmitController)
  application.register("autocomplete", autocompleteController)
  application.register("badge-dot", badgeDotController)
  application.register("boost-delete", boostDeleteController)
  application.register("boosts-frame", boostsFrameController)
  application.register("composer", composerController)
  application.register("copy-to-clipboard", copyToClipboardController)
  application.register("drop-target", dropTargetController)
  application.register("element-removal", elementRemovalController)
  application.register("filter", filterController)
  application.register("form", formController)
  application.register("lightbox", lightboxController)
  application.register("local-time", localTimeController)
  application.register("maintain-scroll", maintainScrollController)
  application.register("message-actions", messageActionsController)
  application.register("message-options", messageOptionsController)
  application.register("messages", messagesController)
  application.register("notifications", notificationsController)
  application.register("popup", popupController)
  application.register("presence", presenceController)
  application.register("pwa-install", pwaInstallController)
  application.register("read-rooms", readRoomsController)
  application.register("refresh-room", refreshRoomController)
  application.register("reply", replyController)
  application.register("rich-autocomplete", richAutocompleteController)
  application.register("rooms-list", roomsListController)
  application.register("scroll-into-view", scrollIntoViewController)
  application.register("search-results", searchResultsController)
  application.register("sessions", sessionsController)
  application.register("soft-keyboard", softKeyboardController)
  application.register("sorted-list", sortedListController)
  application.register("sound", soundController)
  application.register("toggle-class", toggleClassController)
  application.register("turbo-frame", turboFrameController)
  application.register("turbo-streaming", turboStreamingController)
  application.register("typing-notifications", typingNotificationsController)
  application.register("upload-preview", uploadPreviewController)
  application.register("web-share", webShareController)
}
