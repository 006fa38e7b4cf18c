// Package adapters is the port between the bot and a chat platform: the
// neutral event and message types and the small Adapter interface that
// adapters/slack, adapters/matrix and adapters/console implement. Platform
// code lives in those subpackages; policy (who may do what) lives in bot.
package adapters
