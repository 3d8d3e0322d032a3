// application.js: the page's entry module. Starts Turbo (Drive, Frames, Streams), Trix and
// Stimulus, defines <turbo-cable-stream-source>, and registers every controller.
import * as Turbo from "@hotwired/turbo"
import Trix from "trix"
import { Application } from "@hotwired/stimulus"
import "lib/current"
import "lib/stream_source"
import { registerControllers } from "controllers/index"

window.Turbo = Turbo
// Reply quotes end with a cite line; a block attribute of its own keeps it when edited (spec/08 §1).
Trix.config.blockAttributes.cite = { tagName: "cite", inheritable: false }
const application = Application.start()
window.Stimulus = application
registerControllers(application)
