# A Homebrew formula for the hammock command, for a tap of the project's own
# (`brew tap OWNER/hammock URL && brew install hammock`). Not checked by brew here (no Homebrew on the
# Linux machine that builds Hammock): docs/install.md says what was checked and what was not.
# `url` and `sha256` are filled in when a release is tagged; until then `brew install --HEAD` builds main.
class Hammock < Formula
  desc "Mock REST server described in JSON, YAML or an OpenAPI document"
  homepage "https://github.com/OWNER/hammock"
  license "Apache-2.0"
  head "https://github.com/OWNER/hammock.git", branch: "main"

  depends_on xcode: ["16.0", :build]
  uses_from_macos "curl"
  uses_from_macos "sqlite"

  on_linux do
    depends_on "swift" => :build
  end

  def install
    system "swift", "build", "--disable-sandbox", "--configuration", "release", "--product", "hammock"
    bin.install ".build/release/hammock"
    bash_completion.install "share/completions/hammock.bash" => "hammock"
    zsh_completion.install "share/completions/_hammock"
    fish_completion.install "share/completions/hammock.fish"
    man1.install "share/man/man1/hammock.1"
  end

  test do
    assert_match version.to_s, shell_output("#{bin}/hammock --version") unless build.head?
    (testpath/"mock.json").write <<~JSON
      {"resources": [{"name": "people", "fields": {"name": "string"}}]}
    JSON
    assert_match "/people/:id", shell_output("#{bin}/hammock routes #{testpath}/mock.json")
  end
end
