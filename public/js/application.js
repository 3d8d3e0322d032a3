// application.js: the page's entry module. Starts Turbo (Drive, Frames, Streams), Trix and
// Stimulus, defines <turbo-cable-stream-source>, and registers every controller.
import * as Turbo from "@hotwired/turbo"
import "trix"
import { Application } from "@hotwired/stimulus"
import "lib/current"
import "lib/stream_source"
import { registerControllers } from "controllers/index"

window.Turbo = Turbo
const application = Application.start()
window.Stimulus = application
registerControllers(application)
